/**
 * Reading request bodies of the OAuth endpoints as a flat object, by content type.
 *
 * @module
 */
import { BadRequestError } from "./errors.js";

/** The largest body the sandbox reads, in bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** The encodings an endpoint accepts. */
export type BodyEncoding = "json" | "form";

/**
 * Returns the media type of a `Content-Type` value, lower case, without parameters.
 *
 * @example mediaType("Application/JSON; charset=utf-8") // "application/json"
 * @see RFC 9110 §8.3.1
 */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Reads the body as a JSON object (`application/json`) or a form (`application/x-www-form-urlencoded`),
 * whichever of `accepted` the `Content-Type` names.
 *
 * @throws BadRequestError for another content type, a body over {@link MAX_BODY_BYTES}, JSON that
 *   does not parse or is not an object, or a form parameter given twice.
 * @see RFC 6749 §3.2 (parameters must not be included more than once)
 */
export async function readBody(request: Request, accepted: readonly BodyEncoding[]): Promise<Record<string, unknown>> {
  const type = mediaType(request.headers.get("content-type"));
  const encoding: BodyEncoding | undefined =
    type === "application/json" ? "json" : type === "application/x-www-form-urlencoded" ? "form" : undefined;
  if (encoding === undefined || !accepted.includes(encoding)) {
    const names = accepted.map((kind) => (kind === "json" ? "application/json" : "application/x-www-form-urlencoded"));
    throw new BadRequestError(`Content-Type must be ${names.join(" or ")}.`);
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw new BadRequestError(`The body is larger than ${MAX_BODY_BYTES} bytes.`);
  let text: string;
  try {
    text = await request.text();
  } catch {
    throw new BadRequestError("The body could not be read.");
  }
  if (text.length > MAX_BODY_BYTES) throw new BadRequestError(`The body is larger than ${MAX_BODY_BYTES} bytes.`);
  if (encoding === "form") {
    const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of new URLSearchParams(text)) {
      if (Object.hasOwn(body, name))
        throw new BadRequestError(`The parameter ${name.slice(0, 64)} is given more than once.`);
      body[name] = value;
    }
    return body;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequestError("The body is not valid JSON.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new BadRequestError("The body must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

/**
 * Reads an optional string field: undefined when absent, the string when present.
 *
 * @throws BadRequestError when the field is present but not a string.
 * @see RFC 6749 §5.2 (invalid_request: a parameter of the wrong form)
 */
export function stringField(body: Record<string, unknown>, name: string): string | undefined {
  if (!Object.hasOwn(body, name)) return undefined;
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new BadRequestError(`${name} must be a string.`);
  return value;
}

/**
 * Reads a required non-empty string field.
 *
 * @throws BadRequestError when it is missing, empty, or not a string.
 * @see RFC 6749 §5.2 (invalid_request: a missing parameter)
 */
export function requiredString(body: Record<string, unknown>, name: string): string {
  const value = stringField(body, name);
  if (value === undefined || value === "") throw new BadRequestError(`${name} is required.`);
  return value;
}

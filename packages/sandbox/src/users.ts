/**
 * The sandbox's users: the people who can sign in. Each sign-in is approved as one of them (chosen on
 * the consent page, or by the sandbox-only `sandbox_user` parameter of the authorization request),
 * its tokens belong to that user, and `GET /api/v1/auth/user` answers each token with its own user's
 * record. The contract keeps the user record an open object; the sandbox needs only an `id` in each.
 *
 * @module
 */

/** A user's `id`: a non-empty string or a safe integer, as the record holds it. */
export type UserId = string | number;

/** A user record: what `GET /api/v1/auth/user` returns, an open object with at least an `id`. */
export type UserRecord = Readonly<Record<string, unknown>>;

/** The sandbox-only parameter of `GET /oauth/authorize` that names the user to approve as. */
export const USER_PARAMETER = "sandbox_user";

/** The most users a sandbox holds. */
export const MAX_USERS = 10_000;

/** The first demo user, the one a sign-in is approved as unless another is chosen. */
export const DEMO_USER: UserRecord = Object.freeze({
  id: 42,
  name: "Ada Lovelace",
  email: "ada@example.org",
  locale: "en",
});

/** The sandbox's users unless others are configured: three, with distinct ids, names, e-mail addresses and locales. */
export const DEMO_USERS: readonly UserRecord[] = Object.freeze([
  DEMO_USER,
  Object.freeze({ id: 43, name: "Grace Hopper", email: "grace@example.org", locale: "en" }),
  Object.freeze({ id: 44, name: "Émilie du Châtelet", email: "emilie@example.org", locale: "fr" }),
]);

/** A `users` option or config field that cannot be used; the message names the problem. */
export class UserConfigError extends Error {
  override readonly name = "UserConfigError";
  readonly code = "invalid_users";
}

/**
 * The users of `count` demo users: the three {@link DEMO_USERS} first, then `{ id: 45, name: "Test
 * User 45", email: "user45@example.org", locale: "en" }` and so on, ids counting up from 42.
 *
 * @throws UserConfigError when `count` is not a whole number from 1 to {@link MAX_USERS}.
 * @example demoUsers(200).at(-1) // { id: 241, name: "Test User 241", email: "user241@example.org", locale: "en" }
 */
export function demoUsers(count: number): UserRecord[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_USERS)
    throw new UserConfigError(`users must be a whole number from 1 to ${MAX_USERS}, or a list of user records`);
  return Array.from({ length: count }, (_, index) => {
    const id = 42 + index;
    return (
      DEMO_USERS[index] ?? Object.freeze({ id, name: `Test User ${id}`, email: `user${id}@example.org`, locale: "en" })
    );
  });
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The users of a sandbox, found by id. Ids are compared as text: `42` and `"42"` name one user, so
 * both may not be configured, and the `sandbox_user` parameter or a consent form's `user` field (text)
 * finds a user whose id is a number.
 */
export class SandboxUsers {
  readonly #byKey = new Map<string, UserRecord>();
  readonly #list: readonly UserRecord[];

  /**
   * @param users the records (at least one; the first is the default), or how many demo users to make
   *   ({@link demoUsers}); default {@link DEMO_USERS}.
   * @throws UserConfigError for an empty or too long list, a record that is not an object or has no
   *   `id` (a non-empty string or a safe integer), or two records with one id.
   */
  constructor(users: readonly UserRecord[] | number = DEMO_USERS) {
    const list = typeof users === "number" ? demoUsers(users) : users;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_USERS)
      throw new UserConfigError(`users must list 1 to ${MAX_USERS} user records`);
    list.forEach((user, index) => {
      if (!isRecord(user)) throw new UserConfigError(`users[${index}] must be a JSON object`);
      const id = user["id"];
      if (!((typeof id === "string" && id !== "") || Number.isSafeInteger(id)))
        throw new UserConfigError(`users[${index}].id must be a non-empty string or a whole number`);
      const key = String(id);
      if (this.#byKey.has(key)) throw new UserConfigError(`users[${index}]: the id ${key} is given twice`);
      this.#byKey.set(key, Object.freeze({ ...user }));
    });
    this.#list = Object.freeze([...this.#byKey.values()]);
  }

  /** The user a sign-in is approved as when none is chosen: the first. */
  get default(): UserRecord {
    return this.#list[0] as UserRecord;
  }

  /** Every user, in the configured order. */
  list(): readonly UserRecord[] {
    return this.#list;
  }

  /** How many users there are. */
  get size(): number {
    return this.#list.length;
  }

  /** The user whose id is `id` (a number or its text), or undefined. */
  get(id: UserId): UserRecord | undefined {
    return this.#byKey.get(String(id));
  }

  /** Whether `id` names a user. */
  has(id: UserId): boolean {
    return this.#byKey.has(String(id));
  }

  /** The ids, for messages: the first `most`, then `...` when there are more (ASCII: RFC 6749 §4.1.2.1 allows no other in `error_description`). */
  describeIds(most = 5): string {
    const ids = this.#list.slice(0, most).map((user) => String(user["id"]));
    return ids.join(", ") + (this.#list.length > most ? ", ..." : "");
  }
}

/** The `id` of a user record (checked by {@link SandboxUsers}). */
export const idOf = (user: UserRecord): UserId => user["id"] as UserId;

/**
 * Test helper: matches a failure thrown as the base class itself (not a subclass) with a given code.
 * Not part of the package (excluded from the build).
 */
import { expect } from "vitest";
import { type ErrorCode, TokenManagerError } from "../errors.js";

/** `expect(x).toEqual(failure("STATE_MISMATCH"))`, `.rejects.toThrow(failure("STORAGE_FAILED"))`. */
export const failure = (code: ErrorCode) =>
  expect.objectContaining({ constructor: TokenManagerError, name: "TokenManagerError", code });

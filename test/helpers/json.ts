/** A response body read loosely: the test's expect() calls are its type check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any field of a JSON body is read without a cast
export type Json = Record<string, any>;

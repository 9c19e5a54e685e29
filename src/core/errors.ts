// Few error classes, each with a stable `code` to match on and the native `cause`.

export type EdgewatchErrorCode =
  | 'CONFIG_INVALID'
  | 'RULES_INVALID'
  | 'STORE_FAILED'
  | 'SOURCE_FAILED'
  | 'DELIVERY_FAILED';

export class EdgewatchError extends Error {
  readonly code: EdgewatchErrorCode;

  constructor(code: EdgewatchErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EdgewatchError';
    this.code = code;
  }
}

/** An error's message (anything else thrown, as text). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The string `code` of an error (an ApiError's, a Node or SQLite error's), if it has one. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** An error as one line for logs and messages: its message, led by its code unless the message names it. */
export function describeError(error: unknown): string {
  const message = errorMessage(error);
  const code = error instanceof Error ? errorCode(error) : undefined;
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}

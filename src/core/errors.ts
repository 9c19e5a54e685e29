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

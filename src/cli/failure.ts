// What a command that failed prints: one line per problem, naming what to fix. Expected failures
// (invalid configuration, a database that cannot be written, a missing file) never show a stack;
// anything else is a bug, and its stack helps whoever reports it.
import { EdgewatchError, errorCode, errorMessage } from '../core/errors.ts';

export function failureLines(error: unknown, dbPath: string | undefined): string[] {
  if (error instanceof EdgewatchError) return error.message.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  const code = errorCode(error);
  const message = errorMessage(error);
  // better-sqlite3's errors (SqliteError) name neither the database nor the command's part in it.
  if (code?.startsWith('SQLITE_')) return [`database ${dbPath ?? '(not configured)'}: ${message} (${code})`];
  // Node's file system errors name the path: `EACCES: permission denied, open './rules/a.yaml'`.
  if (code !== undefined && /^E[A-Z]+$/.test(code)) return [message];
  return [error instanceof Error && error.stack ? error.stack : message];
}

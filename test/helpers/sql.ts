// A test's own connection to its SQLite file, to read what the store wrote (or to break the file
// on purpose): the store keeps its handle to itself.
import SqliteDatabase from 'better-sqlite3';

export type Sql = SqliteDatabase.Database;

export function openSql(file: string): Sql {
  const sql = new SqliteDatabase(file);
  sql.pragma('busy_timeout = 5000');
  return sql;
}

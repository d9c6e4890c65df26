/**
 * A piece of SQL and its `?` bindings in order: what the slice owning a table gives another
 * slice that composes one statement with it (docs/architecture.md "Explicit wiring"). Pure.
 */
export type SqlBinding = string | number | boolean | null | Date | string[];

export interface SqlFragment {
  sql: string;
  bindings: SqlBinding[];
}

// A schema change of one component (its tables), as each engine keeps a versioned list of them: applied
// in (component, version) order at start, each once, recorded in schema_migrations.
export interface Migration {
  /** Owner of the tables (e.g. 'entries', 'gate', 'jobs'); versions count per component. */
  component: string;
  version: number;
  sql: string;
}

/** The migrations of `all` not yet in `done` ("component@version"), in the order they apply. */
export function pendingMigrations(all: Migration[], done: Set<string>): Migration[] {
  return all
    .filter((m) => !done.has(`${m.component}@${m.version}`))
    .sort((a, b) => a.component.localeCompare(b.component) || a.version - b.version);
}

// What processes sharing one database agree through it: which of them polls a source (the
// source's leader), and whether the database answers. A SQLite file serves one process, which
// leads every source; PostgreSQL's cluster is in postgres.ts.

export interface Cluster {
  /**
   * Takes the lead of `source`, or confirms it is still held (tried at every scheduled poll): false
   * while another process leads it. Throws when the database cannot be asked.
   */
  lead(source: string, now: Date): Promise<boolean>;
  /** The sources this process leads, each with since when. */
  led(): ReadonlyMap<string, Date>;
  /** Gives up every source, so that the other processes take them over. */
  giveUp(): Promise<void>;
  /** Throws when the database does not answer. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** One process alone on its database: it leads every source it polls. */
export function singleProcess(): Cluster {
  const led = new Map<string, Date>();
  return {
    lead: async (source, now) => {
      if (!led.has(source)) led.set(source, now);
      return true;
    },
    led: () => led,
    giveUp: async () => led.clear(),
    check: async () => undefined,
    close: async () => undefined,
  };
}

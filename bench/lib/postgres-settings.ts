import os from 'node:os';
import { startPostgres, type PostgresCluster } from '../../test/support/postgres.ts';

/**
 * The memory settings of the benchmark's PostgreSQL cluster: those PostgreSQL's documentation gives
 * as the starting point for a dedicated server (a quarter of the RAM for shared_buffers; the planner
 * told that the operating system caches about half of it), as a deployment would set them, not the
 * 128 MB that initdb writes so that a cluster starts anywhere. With the default, the rows a search
 * rechecks outgrew the shared buffers at a million files: a broad search took 294 ms instead of 120
 * (README, PostgreSQL).
 */
function benchPostgresSettings(): Record<string, string> {
  const mib = Math.floor(os.totalmem() / 1024 / 1024);
  return { shared_buffers: `${Math.floor(mib / 4)}MB`, effective_cache_size: `${Math.floor(mib / 2)}MB` };
}

/** The benchmark's throwaway PostgreSQL cluster, with those settings. */
export function startBenchPostgres(): Promise<PostgresCluster> {
  return startPostgres(benchPostgresSettings());
}

import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Database } from '../../database/database.js';
import type { ReadReplicas } from '../../database/read-replicas.js';
import { Metrics } from './metrics.js';

/**
 * The database's series: its pool, whether it is taken as frozen, and the read replicas. Gauges read when
 * Prometheus scrapes (collect callbacks): nothing is counted on the request path.
 */
@Injectable()
export class DatabaseMetrics implements OnModuleInit {
  constructor(
    private readonly metrics: Metrics,
    private readonly database: Database,
  ) {}

  onModuleInit(): void {
    const { metrics, database } = this;
    metrics.gauge({
      name: 'db_pool_connections',
      help: 'Connections of the PostgreSQL pool (pg under TypeORM): state="total" open, state="idle" open and unused.',
      labelNames: ['state'],
      collect() {
        const { total, idle } = database.poolStats();
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
      },
    });
    metrics.gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a pool connection (all in use): above 0 for long, the pool is too small or the database too slow.',
      collect() {
        this.set(database.poolStats().waiting);
      },
    });
    metrics.gauge({
      name: 'db_frozen',
      help: '1 while PostgreSQL is taken as frozen (no answer to statements in flight nor to a probe): statements are refused at once until a probe is answered.',
      collect() {
        this.set(database.liveness?.frozen ? 1 : 0);
      },
    });
    if (database.replicas) registerReplicaSeries(metrics, database.replicas);
  }
}

/**
 * The read replicas (DATABASE_REPLICA_URLS), labelled by their place in that list ("1", "2", …: never
 * the URL, which may hold a password): their pools, whether each is in use, and how many reads each
 * took and how many of those the primary answered instead.
 */
function registerReplicaSeries(metrics: Metrics, replicas: ReadReplicas): void {
  const label = (index: number) => ({ replica: String(index + 1) });
  metrics.gauge({
    name: 'db_replica_pool_connections',
    help: 'Connections of each read replica\'s pool: state="total" open, state="idle" open and unused.',
    labelNames: ['replica', 'state'],
    collect() {
      replicas.poolStats().forEach(({ total, idle }, index) => {
        this.set({ ...label(index), state: 'total' }, total);
        this.set({ ...label(index), state: 'idle' }, idle);
      });
    },
  });
  metrics.gauge({
    name: 'db_replica_pool_waiting_requests',
    help: 'Reads waiting for a connection of each read replica\'s pool.',
    labelNames: ['replica'],
    collect() {
      replicas.poolStats().forEach(({ waiting }, index) => this.set(label(index), waiting));
    },
  });
  metrics.gauge({
    name: 'db_replica_up',
    help: '1 while a read replica takes reads, 0 while it is left out after failing (reads go to the primary).',
    labelNames: ['replica'],
    collect() {
      replicas.stats().forEach(({ down }, index) => this.set(label(index), down ? 0 : 1));
    },
  });
  // Counters kept by ReadReplicas itself (no work on the read path for metrics): copied at scrape time.
  metrics.counter({
    name: 'db_replica_reads_total',
    help: 'Reads sent to each read replica.',
    labelNames: ['replica'],
    collect() {
      this.reset();
      replicas.stats().forEach(({ queries }, index) => this.inc(label(index), queries));
    },
  });
  metrics.counter({
    name: 'db_replica_fallbacks_total',
    help: 'Reads a read replica could not serve (down, starting, recovery conflict, timeout), answered by the primary instead.',
    labelNames: ['replica'],
    collect() {
      this.reset();
      replicas.stats().forEach(({ failures }, index) => this.inc(label(index), failures));
    },
  });
}

/**
 * A budget of work in progress: `run(cost, work)` starts when `cost` units are free (first come, first
 * served) and gives them back when the work ends; a cost above the budget takes the whole budget. For
 * work whose size is known up front and whose throughput is bounded elsewhere anyway (the database's
 * cores), so that waiting costs neither a pooled connection nor memory for a result.
 */
export class ConcurrencyLimit {
  private used = 0;
  private readonly waiting: { cost: number; start: () => void }[] = [];

  constructor(readonly budget: number) {}

  async run<T>(cost: number, work: () => Promise<T>): Promise<T> {
    const units = Math.min(Math.max(cost, 1), this.budget);
    if (this.waiting.length > 0 || this.used + units > this.budget) {
      await new Promise<void>((start) => this.waiting.push({ cost: units, start }));
    } else {
      this.used += units;
    }
    try {
      return await work();
    } finally {
      this.used -= units;
      this.startWaiting();
    }
  }

  private startWaiting(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0].cost <= this.budget) {
      const next = this.waiting.shift()!;
      this.used += next.cost;
      next.start();
    }
  }
}

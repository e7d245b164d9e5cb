import FindMyWay, { type HTTPMethod } from 'find-my-way';

const METHODS: HTTPMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Every route the application registered, so that a path known under other methods answers 405 with
 * `Allow` instead of a 404.
 */
export class RouteTable {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true });
  private readonly seen = new Set<string>();

  add(method: string | string[], url: string): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const upper = one.toUpperCase() as HTTPMethod;
      if (!METHODS.includes(upper) || this.seen.has(`${upper} ${url}`)) continue;
      this.seen.add(`${upper} ${url}`);
      this.router.on(upper, url, () => undefined);
    }
  }

  allowedMethods(path: string): string[] {
    const pathname = path.split('?')[0];
    return METHODS.filter((method) => this.router.find(method, pathname) !== null);
  }
}

import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium): the browser of the page tests, with the flags it needs headless in a container. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebGL without a GPU: SwiftShader, software rendering, named rather than left to Chromium's fallback
  // (Debian's Chromium 156 still falls back to it, Chrome has been retiring that; --use-gl=angle gives no WebGL).
  // Playwright passes --enable-unsafe-swiftshader too.
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/** How a worker's listener says a violation on its console (no binding reaches a worker; Playwright forwards its console). */
const WORKER_VIOLATION = 'Content-Security-Policy violation in a worker: ';

/**
 * Every Content-Security-Policy violation the page's documents and workers report (the
 * `securitypolicyviolation` event), as `<directive> blocked <what> at <where>`, collected in Node as they
 * happen: a binding outlives the document, so reloads and navigations lose none. Chromium also logs a
 * document's violations to the console ("Refused to …"; the page tests collect console errors too), but
 * not a worker's where the test sees it: a worker's listener is installed as it starts and says them on
 * its console.
 */
export async function recordPolicyViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeBinding('reportPolicyViolation', (_source, text: string) => violations.push(text));
  // Runs in each new document before its own scripts, outside its policy (the test compiles without the DOM's types).
  await page.addInitScript(() =>
    (globalThis as any).addEventListener('securitypolicyviolation', (event: any) =>
      (globalThis as any).reportPolicyViolation(`${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`),
    ),
  );
  page.on('worker', (worker) => {
    worker
      .evaluate((prefix) => {
        (globalThis as any).addEventListener('securitypolicyviolation', (event: any) =>
          console.error(`${prefix}${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`),
        );
      }, WORKER_VIOLATION)
      .catch(() => undefined);
  });
  page.on('console', (message) => {
    if (message.worker() && message.text().startsWith(WORKER_VIOLATION)) violations.push(`${message.text().slice(WORKER_VIOLATION.length)} (in ${message.worker()!.url()})`);
  });
  return violations;
}

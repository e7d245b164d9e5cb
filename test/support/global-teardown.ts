import type { EmbeddedPostgres } from '../../src/database/embedded-postgres';

export default async function globalTeardown(): Promise<void> {
  const embedded = (globalThis as Record<string, unknown>).__EMBEDDED_TEST_DB__ as EmbeddedPostgres | undefined;
  await embedded?.stop();
}

#!/usr/bin/env node
// Writes the service's OpenAPI document, exactly as GET /docs-json serves it, without a database, a
// listening server or a build: the TypeScript sources are loaded directly (scripts/lib/load-typescript.mjs)
// and src/app.openapi.ts builds the application in Nest's preview mode.
//   node scripts/openapi-document.mjs [FILE]   (default: stdout)
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { requireFromRoot } from './lib/load-typescript.mjs';

/** The document, as an object. */
export async function openApiDocument() {
  const { createOpenApiDocumentOffline } = requireFromRoot('./src/app.openapi.ts');
  return createOpenApiDocumentOffline();
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  if (process.argv[2]) writeFileSync(process.argv[2], text);
  else process.stdout.write(text);
}

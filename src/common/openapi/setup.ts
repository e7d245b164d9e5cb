import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { SECURITY } from './docs.js';

const DESCRIPTION = `
JSON:API service for digital twins, quests and timeline events.

**Headers.** Every request carries \`Authorization: Token <ACCESS_TOKEN>\` and \`X-Organization: <ORG_ID>\`;
quest and event requests also carry \`X-Twin: <TWIN_ID>\` (the twin the caller acts as).

**Wire conventions.** Responses are \`application/vnd.api+json\` (the twin map listing:
\`application/geo+json\`). Request bodies must be \`application/vnd.api+json\` or \`application/json\`
(otherwise 415); bodies over 1 MiB are refused with 413 (the body is read and discarded first, so the 413 reaches
a client that is still sending); invalid JSON is a 400. Trailing slashes are optional on every path.

**Free-form JSON** (event \`data\`, twin \`meta-data\` and \`opening-hours\`) is stored and returned exactly as
sent, whatever its member names (\`__proto__\`, \`constructor\`, \`toString\`, … are ordinary data). A PATCH of
event \`data\` merges its top-level keys (null removes a key); a PATCH of a twin attribute replaces it.
Timestamps are ISO 8601 UTC with microseconds. Lists are paginated with \`page_number\` (from 1) and
\`page_size\` (default 50, max 100); a page past the last one is a 404. Links are absolute and keep the
other query parameters.

**Errors** are JSON:API errors documents: \`{errors: [{status, code, title, detail, source}]}\` where
\`source\` names the offending \`pointer\` (body), \`parameter\` (query) or \`header\`.
401 comes with \`WWW-Authenticate: Token\`; 429 with \`Retry-After\`; 503 when the database is unreachable.
Failures below the routes are errors documents too: 400 (a malformed URL or request), 414 (a path segment
over 200 characters), 417 (an \`Expect\` other than \`100-continue\`), 431 (headers over 16 KiB).
`;

/** Swagger UI at /docs and the OpenAPI document at /docs-json. */
export function setupOpenApi(app: NestFastifyApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Digital Twin, Quest and Timeline Event service')
    .setDescription(DESCRIPTION)
    .setVersion('1.0')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <ACCESS_TOKEN>`' }, SECURITY.token)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Organization', description: 'The organization to act in (`<ORG_ID>`).' }, SECURITY.organization)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Twin', description: 'The twin to act as (`<TWIN_ID>`), on quest and event routes.' }, SECURITY.twin)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <ADMIN_TOKEN>` (from the environment).' }, SECURITY.admin)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
}

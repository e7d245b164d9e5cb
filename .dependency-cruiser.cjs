// The layers of the service (docs/ARCHITECTURE.md, "Layers"), checked by `npm run lint:layers` in CI so
// that each one stays replaceable and readable on its own. Bottom up; each may import the ones below it:
//
//   src/database/schema   table declarations (nothing of the service)
//   src/config            the validated environment (nothing of the service)
//   src/database          connections and queries (config, schema, db/migrations)
//   src/common            JSON:API, auth, HTTP, OpenAPI, money (config, database)
//   features              src/<feature>/: controller -> service -> repository; another feature only
//                         through the allow-list below
//   top                   src/app.*, src/main.ts, src/cli/ (everything; nothing imports them)
//
// db/migrations stand apart: a migration must keep doing what it did the day it first ran, so it does
// not import today's code (at most the table declarations).
//
// There are no exceptions: CI fails on any violation.

const FEATURES = ['twins', 'maps', 'events', 'quests', 'places', 'images', 'organizations', 'accounts', 'revenue', 'admin', 'health', 'operations', 'webhooks', 'geofences', 'ogc'];
const FEATURE = `^src/(?:${FEATURES.join('|')})/`;
const TOP = ['^src/app[.][^/]+$', '^src/main[.]ts$', '^src/cli/'];

// The only imports from one feature into another. Each entry names the files, not just the folder, so
// that a new kind of coupling is a deliberate change here, with its reason.
const CROSS_FEATURE = {
  twins: [
    // `include=organization` adds each listed twin's organization, in that feature's resource form.
    '^src/organizations/organization[.]resource[.]ts$',
    // A twin's move is a change of its timeline's stream: the positions announce it on the events
    // feature's bus (the module exports it).
    '^src/events/event-bus[.]ts$',
    '^src/events/events[.]module[.]ts$',
    // A move crossing a geofence is an event of the twin's timeline, recorded by the statement that
    // stores the position: the crossing SQL is written once, in the geofences feature.
    '^src/geofences/geofence-crossings[.]ts$',
    // A batch's insides are found among the geofences an instance holds, kept by the geofences feature
    // (the module exports the index; the index reads them with its repository).
    '^src/geofences/geofence-index[.]ts$',
    '^src/geofences/geofences[.]module[.]ts$',
  ],
  quests: [
    // `include=twin` (and a task's `place`) adds twins in the twins feature's list form.
    '^src/twins/twin[.]resource[.]ts$',
    // Which twins a tenant may see is one rule, written once as SQL; quest discovery filters by it.
    '^src/twins/twin-visibility[.]ts$',
    // Twins are written by the twins repository alone: a task's place counts it in `tasks_supplied`
    // (the module imports it for the repository; an embark raises the count in its own statement).
    '^src/twins/twins[.](?:module|repository)[.]ts$',
    // A quest's cover is an image of the images feature: the module imports it for ImageLinks and
    // ImagesRepository (the service checks the image belongs to the organization), the resource
    // and the controller build its URLs, the OpenAPI examples show one.
    '^src/images/images[.]module[.]ts$',
    '^src/images/images[.]repository[.]ts$',
    '^src/images/image-links[.]ts$',
    // `include=images,summary-image` adds the images in the images feature's resource form.
    '^src/images/image[.]resource[.]ts$',
    '^src/images/image[.]openapi[.]ts$',
  ],
  maps: [
    // Tiles show the twins a list shows: the twins feature's visibility rule, filter parameters and
    // their SQL conditions, written once there.
    '^src/twins/twin-visibility[.]ts$',
    '^src/twins/twin-filters[.]ts$',
    '^src/twins/twin-conditions[.]ts$',
  ],
  ogc: [
    // The OGC API shows the twins a list shows, as `GET /twins/` shows them: the twins feature's
    // visibility rule, list filter parameters and their SQL conditions, the list form's attributes
    // (SQL and OpenAPI schemas) as the features' properties, all written once there.
    '^src/twins/twin-visibility[.]ts$',
    '^src/twins/twin-filters[.]ts$',
    '^src/twins/twin-conditions[.]ts$',
    '^src/twins/twin[.]resource[.]ts$',
    '^src/twins/twin[.]openapi[.]ts$',
  ],
  operations: [
    // A batch applies event and twin changes by the rules of their own routes: through those features'
    // services (and modules), with their request DTOs (the same validation), the events feature's
    // idempotency keys (canonical hash, key header) and both features' OpenAPI documents.
    '^src/events/events[.](?:module|service)[.]ts$',
    '^src/events/dto/event[.]dto[.]ts$',
    '^src/events/event-data[.]ts$',
    '^src/events/event[.]openapi[.]ts$',
    '^src/twins/twins[.](?:module|service)[.]ts$',
    '^src/twins/dto/twin-attributes[.]dto[.]ts$',
    '^src/twins/twin[.]openapi[.]ts$',
    // `add` of positions: read as the upload reads a position, stored by the positions service, described
    // by the positions' OpenAPI attributes.
    '^src/twins/positions/position-body[.]ts$',
    '^src/twins/positions/positions[.]service[.]ts$',
    '^src/twins/positions/position[.]openapi[.]ts$',
  ],
  places: [
    // Imported places are twins, written by the twins repository (one writer of twins), in the row
    // form the twins feature declares for them (place-twin.ts).
    '^src/twins/twins[.]repository[.]ts$',
    '^src/twins/place-twin[.]ts$',
  ],
  geofences: [
    // `GET /geofences/<ID>/twins/` answers the twins inside in the twins feature's list form (SQL and OpenAPI).
    '^src/twins/twin[.]resource[.]ts$',
    '^src/twins/twin[.]openapi[.]ts$',
    // A crossing is an event of the twin's timeline: its change carries the event in the events
    // feature's resource form (the stream and webhooks send it as they send any event).
    '^src/events/event[.]resource[.]ts$',
  ],
  admin: [
    // The admin API provisions tenants: it writes organizations, accounts and twins through the
    // repositories (and modules) of those features, and answers with the organization's resource form.
    '^src/accounts/accounts[.](?:module|repository)[.]ts$',
    '^src/organizations/organizations[.](?:module|repository)[.]ts$',
    '^src/organizations/organization[.](?:resource|openapi)[.]ts$',
    '^src/twins/twins[.](?:module|repository)[.]ts$',
  ],
};

const featureIsolation = FEATURES.map((feature) => ({
  name: 'no-cross-feature',
  severity: 'error',
  comment:
    `src/${feature} imports another feature outside the allow-list in .dependency-cruiser.cjs. ` +
    'Move what both need down into src/common (or the table declarations into src/database/schema), ' +
    'or add the pair to the allow-list with its reason.',
  from: { path: `^src/${feature}/` },
  to: { path: FEATURE, pathNot: [`^src/${feature}/`, ...(CROSS_FEATURE[feature] ?? [])] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'schema-self-contained',
      severity: 'error',
      comment:
        'Table declarations are the bottom layer: they read by themselves and a migration may import them, ' +
        'so they use only node builtins, npm packages and each other.',
      from: { path: '^src/database/schema/' },
      to: { path: '^(?:src|db|test|bench|scripts)/', pathNot: '^src/database/schema/' },
    },
    {
      name: 'migrations-frozen',
      severity: 'error',
      comment:
        'A migration must keep doing what it did when it first ran; code of today may change under it. ' +
        'At most the table declarations (src/database/schema) are shared.',
      from: { path: '^db/migrations/' },
      to: { path: '^(?:src|test|bench|scripts)/', pathNot: '^src/database/schema/' },
    },
    {
      name: 'config-self-contained',
      severity: 'error',
      comment: 'Configuration is read before anything else exists: it depends on nothing of the service.',
      from: { path: '^src/config/' },
      to: { path: '^(?:src|db)/', pathNot: '^src/config/' },
    },
    {
      name: 'database-not-to-common',
      severity: 'error',
      comment:
        'The database layer sits below the shared helpers (the error mapper knows database errors, not the ' +
        'other way round); what both need belongs in src/database.',
      from: { path: '^src/database/' },
      to: { path: '^src/common/' },
    },
    {
      name: 'infrastructure-not-to-features',
      severity: 'error',
      comment:
        'src/common, src/config and src/database serve every feature, so they know none of them; a helper ' +
        'a feature and the infrastructure share moves down, a table declaration to src/database/schema.',
      from: { path: '^src/(?:common|config|database)/' },
      to: { path: FEATURE },
    },
    {
      name: 'not-to-top',
      severity: 'error',
      comment:
        'src/app.*, src/main.ts and src/cli assemble the whole service; anything below importing them ' +
        'would import every feature and the bootstrap with it.',
      from: { path: '^(?:src|db)/', pathNot: TOP },
      to: { path: TOP },
    },
    ...featureIsolation,
    {
      name: 'controller-only-from-module',
      severity: 'error',
      comment: 'A controller is an entry point: its module registers it, nothing else calls it.',
      from: { pathNot: '[.]module[.]ts$' },
      to: { path: '[.]controller[.]ts$' },
    },
    {
      name: 'controller-through-service',
      severity: 'error',
      comment: 'Controllers stay thin: they call the service, which owns the repository calls (tenant first, transactions).',
      from: { path: '[.]controller[.]ts$' },
      to: { path: '[.]repository[.]ts$' },
    },
    {
      name: 'http-stays-at-the-boundary',
      severity: 'error',
      comment:
        'Headers, statuses, entity tags and request URLs are the HTTP side\'s: controllers and src/common/http ' +
        'read and write them, and hand services plain values (a Precondition, a StreamResume, a version). ' +
        'Services and repositories import neither src/common/http nor Fastify, so they can be called from ' +
        'the CLI, a batch or a worker as they are.',
      from: { path: '[.](?:service|repository)[.]ts$' },
      to: { path: ['^src/common/http/', '(^|/)node_modules/(?:fastify|@fastify/[^/]+)/'] },
    },
    {
      name: 'repository-not-up',
      severity: 'error',
      comment: 'A repository holds SQL and returns rows; services and controllers call it, never the other way round.',
      from: { path: '[.]repository[.]ts$' },
      to: { path: '[.](?:controller|service)[.]ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle makes the order modules load in matter (a class can be undefined where it is decorated) and ' +
        'ties the files together for good; even a type-only cycle means the two files are one layer.',
      from: { path: '^(?:src|db)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment:
        'src/ ships in the production image, which keeps dependencies only (npm prune --omit=dev): a ' +
        'devDependency would be missing there, and even its types tie shipped code to a tool. Declare it ' +
        'under dependencies, or keep the code out of src/.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], pathNot: 'node_modules/@types/' },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment:
        'An npm package that package.json does not declare is there only by accident (as a dependency of ' +
        'another package) and may vanish or change version with it.',
      from: { path: '^(?:src|db)/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file cannot be checked against the layers.',
      from: { path: '^(?:src|db)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // The map page's script runs in the browser and imports by URL (/map/assets/…): not the service's code.
    exclude: { path: ['^src/maps/map-page/'] },
    // Type-only imports count: a layer that needs another's types depends on it as much.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};

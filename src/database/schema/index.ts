/**
 * The schema: every table, declared once (table.ts). The bottom layer: it imports nothing of the
 * service, and everything that reads or writes a table takes its columns from here.
 */
import { accessTokens, accounts, memberships } from './accounts.js';
import { changeLogState, changes, streamedTwins } from './changes.js';
import { events, idempotencyKeys } from './events.js';
import { geofenceSets, geofences } from './geofences.js';
import { images } from './images.js';
import { organizations } from './organizations.js';
import { positions } from './positions.js';
import { questTasks, quests } from './quests.js';
import { revenueEntries } from './revenue.js';
import { serviceKeys } from './service-keys.js';
import { twins } from './twins.js';
import { webhookAttempts, webhookDeliveries, webhooks } from './webhooks.js';

export * from './table.js';
export { accessTokens, accounts, changeLogState, changes, events, geofenceSets, geofences, idempotencyKeys, images, memberships, organizations, positions, questTasks, quests, revenueEntries, serviceKeys, streamedTwins, twins, webhookAttempts, webhookDeliveries, webhooks };

export const tables = [organizations, accounts, memberships, accessTokens, twins, positions, events, idempotencyKeys, images, quests, questTasks, revenueEntries, serviceKeys, changes, changeLogState, streamedTwins, webhooks, webhookDeliveries, webhookAttempts, geofences, geofenceSets];

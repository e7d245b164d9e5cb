import { AccessTokenEntity, AccountEntity, MembershipEntity } from '../accounts/account.entity.js';
import { EventEntity, IdempotencyKeyEntity } from '../events/event.entity.js';
import { ImageEntity } from '../images/image.entity.js';
import { OrganizationEntity } from '../organizations/organization.entity.js';
import { QuestEntity, QuestTaskEntity } from '../quests/quest.entity.js';
import { RevenueEntryEntity } from '../revenue/revenue-entry.entity.js';
import { TwinEntity } from '../twins/twin.entity.js';

/** Every entity of the schema; each module adds its own here. */
export const entities = [OrganizationEntity, AccountEntity, MembershipEntity, AccessTokenEntity, TwinEntity, EventEntity, IdempotencyKeyEntity, ImageEntity, QuestEntity, QuestTaskEntity, RevenueEntryEntity];

import { Foundation1763750000000 } from './1763750000000-Foundation.js';
import { Twins1763760000000 } from './1763760000000-Twins.js';
import { Quests1763770000000 } from './1763770000000-Quests.js';
import { Events1763780000000 } from './1763780000000-Events.js';
import { TwinCounts1763790000000 } from './1763790000000-TwinCounts.js';
import { CredentialChanges1763800000000 } from './1763800000000-CredentialChanges.js';
import { ServiceKeys1763810000000 } from './1763810000000-ServiceKeys.js';
import { TwinSortIndexes1763820000000 } from './1763820000000-TwinSortIndexes.js';
import { TwinTileCells1763830000000 } from './1763830000000-TwinTileCells.js';
import { TwinTileKeys1763840000000 } from './1763840000000-TwinTileKeys.js';
import { EventOccurred1763850000000 } from './1763850000000-EventOccurred.js';
import { ChangeLog1763860000000 } from './1763860000000-ChangeLog.js';
import { ChangeLogBatchPositions1763930000000 } from './1763930000000-ChangeLogBatchPositions.js';
import { Webhooks1763870000000 } from './1763870000000-Webhooks.js';
import { EventTimestampBrin1763880000000 } from './1763880000000-EventTimestampBrin.js';
import { WebhookSecretRotation1763895000000 } from './1763895000000-WebhookSecretRotation.js';
import { CitusReady1763900000000 } from './1763900000000-CitusReady.js';
import { TwinEventCounts1763910000000 } from './1763910000000-TwinEventCounts.js';
import { EventTimelineStatistics1763920000000 } from './1763920000000-EventTimelineStatistics.js';
import { QuestListing1763940000000 } from './1763940000000-QuestListing.js';
import { Positions1763960000000 } from './1763960000000-Positions.js';
import { TileGridShards1763950000000 } from './1763950000000-TileGridShards.js';
import { Geofences1763970000000 } from './1763970000000-Geofences.js';
import { GeofencesByOrganization1763980000000 } from './1763980000000-GeofencesByOrganization.js';
import { TileGridLoneTwins1763990000000 } from './1763990000000-TileGridLoneTwins.js';
import { TileGridFacets1763995000000 } from './1763995000000-TileGridFacets.js';
import { StreamedTwins1764000000000 } from './1764000000000-StreamedTwins.js';
import { TileFractionNearPoles1764010000000 } from './1764010000000-TileFractionNearPoles.js';
import { GeofenceSets1764020000000 } from './1764020000000-GeofenceSets.js';

/**
 * Every migration, oldest first. Listed explicitly (not globbed) so the compiled app, the TypeORM CLI
 * and the TypeScript test run all load the very same set.
 */
export const migrations = [Foundation1763750000000, Twins1763760000000, Quests1763770000000, Events1763780000000, TwinCounts1763790000000, CredentialChanges1763800000000, ServiceKeys1763810000000, TwinSortIndexes1763820000000, TwinTileCells1763830000000, TwinTileKeys1763840000000, EventOccurred1763850000000, ChangeLog1763860000000, Webhooks1763870000000, EventTimestampBrin1763880000000, WebhookSecretRotation1763895000000, CitusReady1763900000000, TwinEventCounts1763910000000, EventTimelineStatistics1763920000000, ChangeLogBatchPositions1763930000000, QuestListing1763940000000, TileGridShards1763950000000, Positions1763960000000, Geofences1763970000000, GeofencesByOrganization1763980000000, TileGridLoneTwins1763990000000, TileGridFacets1763995000000, StreamedTwins1764000000000, TileFractionNearPoles1764010000000, GeofenceSets1764020000000];

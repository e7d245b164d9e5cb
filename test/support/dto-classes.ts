import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import * as adminDto from '../../src/admin/dto/admin.dto';
import * as eventDto from '../../src/events/dto/event.dto';
import * as geofenceDto from '../../src/geofences/dto/geofence.dto';
import * as questDto from '../../src/quests/dto/quest.dto';
import * as twinDto from '../../src/twins/dto/twin-attributes.dto';
import * as webhookDto from '../../src/webhooks/dto/webhook.dto';

export type Constructor = new () => object;

/** The request DTO modules, for tests that hold every DTO class to a rule (dtoFiles checks none is missing). */
export const DTO_MODULES: Record<string, Record<string, unknown>> = {
  'admin/dto/admin.dto.ts': adminDto,
  'events/dto/event.dto.ts': eventDto,
  'geofences/dto/geofence.dto.ts': geofenceDto,
  'quests/dto/quest.dto.ts': questDto,
  'twins/dto/twin-attributes.dto.ts': twinDto,
  'webhooks/dto/webhook.dto.ts': webhookDto,
};

/** The DTO files on disk, as `module/dto/file.ts`. */
export function dtoFiles(): string[] {
  const src = join(__dirname, '../../src');
  return readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(src, entry.name, 'dto')))
    .flatMap((entry) => readdirSync(join(src, entry.name, 'dto')).filter((file) => file.endsWith('.ts')).map((file) => `${entry.name}/dto/${file}`));
}

/** Every class of the DTO modules that declares validated attributes. */
export function dtoClasses(): [string, Constructor][] {
  return Object.values(DTO_MODULES).flatMap((exported) =>
    Object.entries(exported)
      .filter(([, value]) => typeof value === 'function' && getMetadataStorage().getTargetValidationMetadatas(value, '', true, false).length > 0)
      .map(([name, value]) => [name, value as Constructor] as [string, Constructor]),
  );
}

/** The attribute names a DTO class declares (properties with at least one rule). */
export const declaredAttributes = (target: Constructor) => [...new Set(getMetadataStorage().getTargetValidationMetadatas(target, '', true, false).map((rule) => rule.propertyName))];

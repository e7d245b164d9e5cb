import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsNotEmpty, IsString, MaxLength, ValidateIf } from 'class-validator';
import { AsSent } from '../../common/json-api/resource-body.js';
import { MAX_GEOFENCE_VERTICES } from '../geofence-geometry.js';

const GEOMETRY_DESCRIPTION =
  `GeoJSON \`Polygon\` or \`MultiPolygon\` in WGS 84 (longitude first), valid as PostGIS's \`ST_IsValid\` sees it: closed rings of at least 4 positions, ` +
  `no self-intersection, holes allowed (a hole is outside); at most ${MAX_GEOFENCE_VERTICES} vertices in all. A position on the boundary is inside.`;

const geometrySchema = () => ({
  type: 'object' as const,
  required: ['type', 'coordinates'],
  properties: {
    type: { type: 'string' as const, enum: ['Polygon', 'MultiPolygon'] },
    coordinates: { type: 'array' as const, minItems: 1, items: { type: 'array', minItems: 1, items: { type: 'array', items: {} } } },
  },
  additionalProperties: false,
  description: GEOMETRY_DESCRIPTION,
});

const EXAMPLE_GEOMETRY = {
  type: 'Polygon',
  coordinates: [
    [
      [2.29, 48.85],
      [2.3, 48.85],
      [2.3, 48.86],
      [2.29, 48.86],
      [2.29, 48.85],
    ],
  ],
};

export class CreateGeofenceAttributes {
  @ApiProperty({ example: 'Depot', minLength: 1, maxLength: 255 })
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name: string;

  @ApiProperty({ ...geometrySchema(), example: EXAMPLE_GEOMETRY })
  @AsSent()
  @Allow()
  geometry: unknown;

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: 1024, example: 'The yard and its gate' })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(1024)
  description?: string | null;
}

/** Every attribute optional; a given one must be valid. */
export class UpdateGeofenceAttributes {
  @ApiPropertyOptional({ example: 'Depot north', minLength: 1, maxLength: 255 })
  @ValidateIf((_, value) => value !== undefined)
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  // ApiProperty with selfRequired, not ApiPropertyOptional: that one would replace the geometry's `required` list by `false`.
  @ApiProperty({ ...geometrySchema(), selfRequired: false, example: EXAMPLE_GEOMETRY })
  @AsSent()
  @Allow()
  geometry?: unknown;

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: 1024, example: null })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsString()
  @MaxLength(1024)
  description?: string | null;
}

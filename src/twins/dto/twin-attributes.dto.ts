import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsObject,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { AsSent } from '../../common/json-api/resource-body.js';

/**
 * Attributes accepted by `POST /my/twins/` and `PATCH /my/twins/<TWIN_ID>/`. Names are dasherized, as
 * in the JSON:API list form (`phone-number`, `meta-data`, `opening-hours`); underscored names are
 * refused as unknown attributes. An attribute that is given must not be null (except `location`).
 */

/** Validate only when the attribute is present; an explicit null is then refused by the type check. */
const Given = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

const STRING_LIST = { each: true } as const;

export class PersonalityAttributes {
  @ApiPropertyOptional({ type: [String], example: ['outdoors', 'coffee'], description: 'At most 100, each 1–255 characters.' })
  @Given()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString(STRING_LIST)
  @Length(1, 255, STRING_LIST)
  characteristics?: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['guided tours'],
    description: 'Products or services the twin provides publicly; a non-empty list makes it a supplier (visible to everyone).',
  })
  @Given()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString(STRING_LIST)
  @Length(1, 255, STRING_LIST)
  services?: string[];
}

class TwinAttributesBase {
  @ApiPropertyOptional({ example: 'Guided city walks along the river.', maxLength: 10000 })
  @Given()
  @IsString()
  @MaxLength(10000)
  description?: string;

  @ApiPropertyOptional({ example: false, description: 'Visible to every organization. Default false.' })
  @Given()
  @IsBoolean()
  public?: boolean;

  @ApiPropertyOptional({ example: false, description: 'A twin of a person. Default false.' })
  @Given()
  @IsBoolean()
  personal?: boolean;

  // ApiProperty with selfRequired, not ApiPropertyOptional: that one would replace the point's `required` list by `false`.
  @ApiProperty({
    type: 'object',
    nullable: true,
    selfRequired: false,
    required: ['type', 'coordinates'],
    properties: {
      type: { type: 'string', enum: ['Point'] },
      coordinates: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'number', minimum: -180, maximum: 180 } },
    },
    additionalProperties: false,
    example: { type: 'Point', coordinates: [2.3522, 48.8566] },
    description:
      'GeoJSON Point `{type: "Point", coordinates: [longitude, latitude]}` (longitude in [-180, 180], latitude in [-90, 90]) or null. ' +
      'Errors point at the offending member, e.g. `/data/attributes/location/coordinates/1`.',
  })
  @AsSent()
  @Allow()
  location?: unknown;

  @ApiPropertyOptional({ type: PersonalityAttributes, description: 'Replaces the given lists; the personality id is kept.' })
  @Given()
  @IsObject()
  @ValidateNested()
  @Type(() => PersonalityAttributes)
  personality?: PersonalityAttributes;

  @ApiPropertyOptional({ type: [String], format: 'uuid', description: 'Ids of twins the caller can see (at most 1000), not the twin itself.' })
  @Given()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsUUID('all', { each: true })
  connections?: string[];

  @ApiPropertyOptional({ type: [String], example: ['family-friendly'], description: 'At most 100, each 1–255 characters.' })
  @Given()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString(STRING_LIST)
  @Length(1, 255, STRING_LIST)
  tags?: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { category: 'tours' }, description: 'Free-form object, stored and returned as sent, any member names (`meta_data` in the detail); a PATCH replaces it whole.' })
  @AsSent()
  @Given()
  @IsObject()
  'meta-data'?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { weekday_text: ['Monday: 9:00 AM – 5:00 PM'] },
    description: 'Google-Places style object; its `weekday_text` (array of strings) is the detail\'s `opening_hours`.',
  })
  @AsSent()
  @Given()
  @IsObject()
  'opening-hours'?: Record<string, unknown>;

  @ApiPropertyOptional({ example: '+33 1 23 45 67 89', maxLength: 64 })
  @Given()
  @IsString()
  @MaxLength(64)
  'phone-number'?: string;

  @ApiPropertyOptional({ example: '1 Quai de la Tournelle', maxLength: 512 })
  @Given()
  @IsString()
  @MaxLength(512)
  address?: string;

  @ApiPropertyOptional({ example: 'Paris', maxLength: 255 })
  @Given()
  @IsString()
  @MaxLength(255)
  city?: string;

  @ApiPropertyOptional({ example: 'Île-de-France', maxLength: 255 })
  @Given()
  @IsString()
  @MaxLength(255)
  state?: string;

  @ApiPropertyOptional({ example: 'https://example.com', maxLength: 2048 })
  @Given()
  @IsString()
  @MaxLength(2048)
  website?: string;
}

export class CreateTwinAttributes extends TwinAttributesBase {
  @ApiProperty({ example: 'River walks', minLength: 1, maxLength: 255 })
  @IsString()
  @Length(1, 255)
  name: string;
}

export class UpdateTwinAttributes extends TwinAttributesBase {
  @ApiPropertyOptional({ example: 'River walks', minLength: 1, maxLength: 255 })
  @Given()
  @IsString()
  @Length(1, 255)
  name?: string;
}

export type TwinAttributes = CreateTwinAttributes | UpdateTwinAttributes;

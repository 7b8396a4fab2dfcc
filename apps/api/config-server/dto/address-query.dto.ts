import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, registerDecorator } from 'class-validator';
import { hasControlChars, Scalar, TrimmedLikeTheBinding } from '#platform';
import { ADDRESS_LIMITS, FILE_KINDS, type AddressPart, type FileKind } from '../layer-address.js';

/** Stands in for a value with control characters, so the validator below refuses it with its message. */
const INVALID_TEXT = Object.freeze({ invalid: true });

/** Surrounding whitespace is dropped (as the binding rule does) and a blank value counts as absent. */
function cleanText(raw: string): unknown {
  const value = raw.trim();
  if (value === '') return undefined;
  return hasControlChars(value) ? INVALID_TEXT : value;
}

function IsAddressText(part: AddressPart): PropertyDecorator {
  const max = ADDRESS_LIMITS[part];
  return (target: object, property: string | symbol) => {
    TrimmedLikeTheBinding()(target, property);
    registerDecorator({
      name: 'addressText',
      target: target.constructor,
      propertyName: property as string,
      options: { message: `${part} must be 1..${max} characters without control characters` },
      validator: { validate: (value: unknown) => typeof value === 'string' && value.length <= max },
    });
  };
}

/**
 * The address query parameters shared by every config-server endpoint; whether the combination makes
 * sense is decided by `configRequest()` or `layerAddress()`.
 */
export class AddressQueryDto {
  @ApiPropertyOptional({
    maxLength: ADDRESS_LIMITS.host,
    description: 'required; must equal the token host claim on runtime reads',
  })
  @IsOptional()
  @Scalar(cleanText)
  @IsAddressText('host')
  host?: string;

  @ApiPropertyOptional({
    maxLength: ADDRESS_LIMITS.serviceId,
    description: 'the service; must equal the token sid claim on runtime reads',
  })
  @IsOptional()
  @Scalar(cleanText)
  @IsAddressText('serviceId')
  serviceId?: string;

  @ApiPropertyOptional({ maxLength: ADDRESS_LIMITS.productId, description: 'the product, with productVersion' })
  @IsOptional()
  @Scalar(cleanText)
  @IsAddressText('productId')
  productId?: string;

  @ApiPropertyOptional({ maxLength: ADDRESS_LIMITS.productVersion })
  @IsOptional()
  @Scalar(cleanText)
  @IsAddressText('productVersion')
  productVersion?: string;

  @ApiPropertyOptional({
    maxLength: ADDRESS_LIMITS.envTag,
    description: 'the environment; must equal the token env claim on runtime reads',
  })
  @IsOptional()
  @Scalar(cleanText)
  @IsAddressText('envTag')
  envTag?: string;
}

/** Query of the admin files endpoints: a layer address plus the kind of file. */
export class FilesLayerQueryDto extends AddressQueryDto {
  @ApiProperty({ enum: FILE_KINDS })
  @Scalar()
  @IsIn(FILE_KINDS, { message: 'kind must be cert or file' })
  kind!: FileKind;
}

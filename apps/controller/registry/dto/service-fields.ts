import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PROTOCOLS } from '#database';
import { NoControlChars, trimLikeTheBinding } from '#platform';

/**
 * The fields `service/register` shares with `discovery/lookup` and `discovery/subscribe`, each rule written
 * once. Each decorator applies its rules as if stacked above the property in the order listed (TypeScript
 * applies the lowest first), so errors and their messages come in the same order as written out.
 */

/** The longest `envTag` a registration stores (the column's length), and so the longest one to look up. */
export const MAX_ENV_TAG = 255;

function field(...decorators: readonly PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    for (const decorate of [...decorators].reverse()) decorate(target, property);
  };
}

const blankIsAbsent = (input: { value: unknown }): unknown => {
  const value = trimLikeTheBinding(input);
  return value === '' ? undefined : value;
};

/** Required, trimmed as the binding trims it (it is compared to `sid`), 1..255 characters, no control characters. */
export const ServiceIdField = (): PropertyDecorator =>
  field(Transform(trimLikeTheBinding), IsString(), Length(1, 255), NoControlChars());

/** Optional; trimmed as the binding trims it, and blank counts as absent, as in the binding rule. */
export const EnvTagField = (): PropertyDecorator =>
  field(IsOptional(), Transform(blankIsAbsent), IsString(), MaxLength(MAX_ENV_TAG), NoControlChars());

/** Optional, one of `PROTOCOLS`. */
export const ProtocolField = (): PropertyDecorator =>
  field(IsOptional(), IsIn(PROTOCOLS, { message: `protocol must be one of ${PROTOCOLS.join(', ')}` }));

/** The upstream protocol's token, accepted when the upgrade carried no `Authorization` header. */
export const JwtField = (): PropertyDecorator => field(IsOptional(), IsString());

import { Injectable, type PipeTransform } from '@nestjs/common';
import { notFound, ID_PATTERN } from '#platform';

/** A path id that cannot exist (wrong alphabet or length) is simply not found. */
@Injectable()
export class IdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!ID_PATTERN.test(value)) throw notFound(`No resource with id ${value.slice(0, 40)}`);
    return value;
  }
}

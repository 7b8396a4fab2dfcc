import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { notFound, ProblemException, Public } from '#platform';
import { ConsoleAssets, type ConsoleAsset } from './console-assets.js';

/** Same origin only, no inline script or style, no framing (DESIGN 13). */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The operator console's files; the page itself reads only this api's endpoints, with the operator's token. */
@ApiExcludeController()
@Controller('console')
@Public()
export class ConsoleController {
  constructor(private readonly assets: ConsoleAssets) {}

  @Get()
  index(@Res() reply: FastifyReply): void {
    this.send(reply, 'index.html');
  }

  @Get(':file')
  file(@Param('file') file: string, @Res() reply: FastifyReply): void {
    this.send(reply, file);
  }

  private send(reply: FastifyReply, name: string): void {
    if (!this.assets.built) throw new ProblemException(503, 'The console is not built: run `npm run build`');
    const asset: ConsoleAsset | undefined = this.assets.get(name);
    if (asset === undefined) throw notFound(`No console file named ${name}`);
    void reply
      .header('content-type', asset.contentType)
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(asset.body);
  }
}

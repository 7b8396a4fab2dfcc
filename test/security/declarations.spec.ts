import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { AccessDeclarationCheck, DeclareAccess, Public } from '#platform';

/** DESIGN 16: nothing is allowed by default, so an app with an undeclared handler never starts. */

@Controller('declared')
class DeclaredController {
  @Get()
  @Public()
  open(): string {
    return 'ok';
  }
}

@Controller('forgotten')
class ForgottenController {
  @Get()
  forgot(): string {
    return 'leak';
  }
}

@WebSocketGateway({ path: '/never-listening' })
class ForgottenGateway {
  @SubscribeMessage('service/forgotten')
  forgot(): string {
    return 'leak';
  }
}

@Controller('misdeclared')
class MisdeclaredController {
  // Host locations mean nothing to a global-admin route: a declaration that does not hold together is refused.
  @Get()
  @DeclareAccess({ capability: 'tags:read', hostRule: 'global-admin', hostIn: [{ query: 'hostId' }] })
  odd(): string {
    return 'odd';
  }
}

async function boot(controllers: (new () => object)[], providers: (new () => object)[] = []): Promise<void> {
  @Module({ imports: [DiscoveryModule], controllers, providers: [AccessDeclarationCheck, ...providers] })
  class AppUnderTest {}
  const module = await Test.createTestingModule({ imports: [AppUnderTest] }).compile();
  try {
    await module.init();
  } finally {
    await module.close();
  }
}

describe('access declarations are checked at start-up', () => {
  it('an app whose every route declares its access starts', async () => {
    await expect(boot([DeclaredController])).resolves.toBeUndefined();
  });

  it('a route without a declaration stops start-up, naming it', async () => {
    await expect(boot([DeclaredController, ForgottenController])).rejects.toThrow(
      'ForgottenController.forgot has no access declaration',
    );
  });

  it('a JSON-RPC method without a declaration stops start-up, naming it', async () => {
    await expect(boot([DeclaredController], [ForgottenGateway])).rejects.toThrow(
      'ForgottenGateway.forgot has no access declaration',
    );
  });

  it('a declaration that does not hold together stops start-up', async () => {
    await expect(boot([MisdeclaredController])).rejects.toThrow('names host locations outside own-host');
  });
});

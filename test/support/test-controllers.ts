import { Controller, Get, HttpCode, Module, Post } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiProperty } from '@nestjs/swagger';
import { ResponseMessage } from '../../src/common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../src/common/swagger/api-envelope.decorator';
import { AdminRole } from '../../src/modules/admins/entities/admin-role.entity';
import { Public, UseCredential } from '../../src/modules/auth/access.decorators';
import { MACHINE_CREDENTIALS, MachineCredential } from '../../src/modules/auth/access';

/**
 * Test-only routes, mounted with `createTestApp({ imports: [...] })`. They prove what the
 * production routes cannot show on their own: each machine guard in isolation, what the
 * exception filter makes of an unknown error or a database error, and that the global guard
 * refuses a route that forgot its access decorator.
 */

export class MachinePassedDto {
  @ApiProperty({ enum: MACHINE_CREDENTIALS })
  credential: MachineCredential;
}

/** One route per machine credential of auth.md, each behind its `@UseCredential`. */
@Controller('test/machine')
export class MachineCredentialTestController {
  @Post('api-key')
  @HttpCode(200)
  @UseCredential('api-key')
  @ResponseMessage('Machine credential accepted')
  @ApiEnvelope(MachinePassedDto)
  apiKey(): MachinePassedDto {
    return { credential: 'api-key' };
  }

  @Post('log-shipper-key')
  @HttpCode(200)
  @UseCredential('log-shipper-key')
  @ResponseMessage('Machine credential accepted')
  @ApiEnvelope(MachinePassedDto)
  logShipperKey(): MachinePassedDto {
    return { credential: 'log-shipper-key' };
  }

  @Post('callback-token')
  @HttpCode(200)
  @UseCredential('callback-token')
  @ResponseMessage('Machine credential accepted')
  @ApiEnvelope(MachinePassedDto)
  callbackToken(): MachinePassedDto {
    return { credential: 'callback-token' };
  }

  @Post('basic')
  @HttpCode(200)
  @UseCredential('basic')
  @ResponseMessage('Machine credential accepted')
  @ApiEnvelope(MachinePassedDto)
  basic(): MachinePassedDto {
    return { credential: 'basic' };
  }
}

/** Text a 500 must never reveal (asserted absent from the response body). */
export const LEAKY_ERROR_TEXT = 'SELECT password_hash FROM admins -- secret=hunter2';

/** Failures that only the exception filter may turn into an envelope. */
@Controller('test/errors')
export class ErrorTestController {
  constructor(private readonly dataSource: DataSource) {}

  /** A plain Error whose message holds SQL and a secret: the body must show neither. */
  @Get('crash')
  @Public()
  @ResponseMessage('Never answered')
  @ApiEnvelope()
  @ApiErrors(500)
  crash(): never {
    throw new Error(LEAKY_ERROR_TEXT);
  }

  /** A real QueryFailedError that is not a constraint violation (no such table). */
  @Get('bad-sql')
  @Public()
  @ResponseMessage('Never answered')
  @ApiEnvelope()
  @ApiErrors(500, 503)
  async badSql(): Promise<unknown> {
    return this.dataSource.query('SELECT secret_column FROM no_such_table_for_tests');
  }

  /**
   * A real unique-constraint violation: two admin_roles rows with the same name, inside a
   * transaction that the violation rolls back (so nothing stays behind).
   */
  @Post('unique-violation')
  @Public()
  @ResponseMessage('Never answered')
  @ApiEnvelope(undefined, 201)
  @ApiErrors(409)
  async uniqueViolation(): Promise<object> {
    const id = randomInt(10_000, 1_000_000);
    const name = `dup-${id}` as AdminRole['name'];
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(AdminRole, { id, name });
      await manager.insert(AdminRole, { id: id + 1, name });
    });
    return {};
  }
}

/** A route that forgot its access decorator: the global guard must refuse it (403). */
@Controller('test/undecorated')
export class UndecoratedTestController {
  @Get()
  @ResponseMessage('Never answered')
  forgotten(): object {
    return { reached: true };
  }
}

/** The machine-credential and error routes. */
@Module({ controllers: [MachineCredentialTestController, ErrorTestController] })
export class TestControllersModule {}

/** Only the route without an access decorator (for the route walker). */
@Module({ controllers: [UndecoratedTestController] })
export class UndecoratedRouteModule {}

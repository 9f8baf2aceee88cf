import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CleanLogDay } from './entities/clean-log-day.entity';
import { CleanLog } from './entities/clean-log.entity';
import { LogIndex } from './log-index';
import { SqlLogIndex } from './sql-log-index';

/** The clean-log index: SQL tables of the service's database (see LogIndex). */
@Module({
  imports: [TypeOrmModule.forFeature([CleanLog, CleanLogDay])],
  providers: [{ provide: LogIndex, useClass: SqlLogIndex }],
  exports: [LogIndex],
})
export class LogIndexModule {}

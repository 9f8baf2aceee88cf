import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { RunJobsQueryDto } from './dto/job-requests.dto';
import { JobRunListDto } from './dto/job-response.dto';
import { JobsService } from './jobs.service';

/** Runs scheduled jobs on demand (under the same one-replica lock as the scheduler). */
@ApiTags('jobs')
@Controller('api/v1/t3st-job')
export class JobsAdminController {
  constructor(private readonly jobs: JobsService) {}

  /**
   * Run scheduled jobs now.
   *
   * @remarks
   * superAdmin only. Runs the job named by `job`, or every job when none is given, under the same one-replica
   * lock as the scheduler, and returns one item per job run with its outcome, the number of rows affected and
   * the time taken. 400 for an unknown job name.
   */
  @Get()
  @AdminRoles('superAdmin')
  @ResponseMessage('Jobs run')
  @ApiEnvelope(JobRunListDto)
  @ApiErrors(400)
  async run(@Query() query: RunJobsQueryDto): Promise<JobRunListDto> {
    return { items: await this.jobs.run(query.job) };
  }
}

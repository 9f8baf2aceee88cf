import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { Company } from './entities/company.entity';

/** Companies' internal ids by uuid: what the notifications area asks for the companies a broadcast names. */
@Injectable()
export class CompanyIdLookup {
  constructor(@InjectRepository(Company) private readonly companies: Repository<Company>) {}

  /** Id and uuid of the known companies among `uuids` (unknown ones are left out). */
  idsOf(uuids: string[]): Promise<Array<{ id: number; uuid: string }>> {
    return this.companies.find({ where: { uuid: In(uuids) }, select: { id: true, uuid: true } });
  }
}

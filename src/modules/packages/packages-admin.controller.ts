import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ResponseMessage } from '../../common/http/response-message.decorator';
import { Page } from '../../common/pagination/page';
import { ApiEnvelope, ApiErrors } from '../../common/swagger/api-envelope.decorator';
import { AdminRoles } from '../auth/access.decorators';
import { CreatePackageDto, ListPackagesQueryDto, UpdatePackageDto } from './dto/package-requests.dto';
import { AdminPackageDto, AdminPackagePageDto, PackageDeletedDto } from './dto/package-response.dto';
import { PackagesService } from './packages.service';
import { uuidPipe } from '../../common/validation/uuid-param.pipe';

@ApiTags('admin packages')
@Controller('api/v1/admins/packages')
export class PackagesAdminController {
  constructor(private readonly packages: PackagesService) {}

  /**
   * List packages.
   *
   * @remarks
   * Every admin role. Paged, each with `companiesCount`; filtered by `isActive` and `isPublic`.
   */
  @Get()
  @AdminRoles()
  @ResponseMessage('Packages fetched')
  @ApiEnvelope(AdminPackagePageDto)
  @ApiErrors(400)
  list(@Query() query: ListPackagesQueryDto): Promise<Page<AdminPackageDto>> {
    return this.packages.list(query);
  }

  /**
   * Create a package.
   *
   * @remarks
   * superAdmin and accounting. A package is a monthly sending quota with its price (see the body schema);
   * answers 201. 409 when the name is taken.
   */
  @Post()
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package created')
  @ApiEnvelope(AdminPackageDto, 201)
  @ApiErrors(400, 409)
  create(@Body() dto: CreatePackageDto): Promise<AdminPackageDto> {
    return this.packages.create(dto);
  }

  /**
   * Read one package.
   *
   * @remarks
   * Every admin role. The package, archived or not, public or not, with `companiesCount`. 404 when no package
   * has this uuid; 400 for a malformed uuid.
   */
  @Get(':uuid')
  @AdminRoles()
  @ResponseMessage('Package fetched')
  @ApiEnvelope(AdminPackageDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminPackageDto> {
    return this.packages.get(uuid);
  }

  /**
   * Update a package.
   *
   * @remarks
   * superAdmin and accounting. A price change applies to billings created afterwards, never to existing ones.
   * 409 when the new name is taken; 404 when no package has this uuid.
   */
  @Patch(':uuid')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package updated')
  @ApiEnvelope(AdminPackageDto)
  @ApiErrors(400, 404, 409)
  update(@Param('uuid', uuidPipe) uuid: string, @Body() dto: UpdatePackageDto): Promise<AdminPackageDto> {
    return this.packages.update(uuid, dto);
  }

  /**
   * Delete a package, or archive it when it is in use.
   *
   * @remarks
   * superAdmin and accounting. A package that a company or a billing uses is archived (no longer sold) and
   * the result says `archived`; an unused one is deleted and the result says `deleted`. 404 when no package
   * has this uuid.
   */
  @Delete(':uuid')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package removed')
  @ApiEnvelope(PackageDeletedDto)
  @ApiErrors(400, 404)
  remove(@Param('uuid', uuidPipe) uuid: string): Promise<PackageDeletedDto> {
    return this.packages.remove(uuid);
  }
}

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

  @Get()
  @AdminRoles()
  @ResponseMessage('Packages fetched')
  @ApiEnvelope(AdminPackagePageDto)
  @ApiErrors(400)
  list(@Query() query: ListPackagesQueryDto): Promise<Page<AdminPackageDto>> {
    return this.packages.list(query);
  }

  @Post()
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package created')
  @ApiEnvelope(AdminPackageDto, 201)
  @ApiErrors(400, 409)
  create(@Body() dto: CreatePackageDto): Promise<AdminPackageDto> {
    return this.packages.create(dto);
  }

  @Get(':uuid')
  @AdminRoles()
  @ResponseMessage('Package fetched')
  @ApiEnvelope(AdminPackageDto)
  @ApiErrors(400, 404)
  get(@Param('uuid', uuidPipe) uuid: string): Promise<AdminPackageDto> {
    return this.packages.get(uuid);
  }

  @Patch(':uuid')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package updated')
  @ApiEnvelope(AdminPackageDto)
  @ApiErrors(400, 404, 409)
  update(@Param('uuid', uuidPipe) uuid: string, @Body() dto: UpdatePackageDto): Promise<AdminPackageDto> {
    return this.packages.update(uuid, dto);
  }

  @Delete(':uuid')
  @AdminRoles('superAdmin', 'accounting')
  @ResponseMessage('Package removed')
  @ApiEnvelope(PackageDeletedDto)
  @ApiErrors(400, 404)
  remove(@Param('uuid', uuidPipe) uuid: string): Promise<PackageDeletedDto> {
    return this.packages.remove(uuid);
  }
}

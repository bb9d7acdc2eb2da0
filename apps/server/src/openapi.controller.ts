import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Public } from '@switchboard/access';

@Injectable()
export class OpenApiDocument {
  document: OpenAPIObject | null = null;
}

/** The API description, generated from the controllers and DTOs at start, so it cannot drift. */
@ApiExcludeController()
@Controller()
export class OpenApiController {
  constructor(private readonly holder: OpenApiDocument) {}

  @Get('openapi.json')
  @Public()
  get() {
    return this.holder.document;
  }
}

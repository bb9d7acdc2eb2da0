import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '@switchboard/access';
import type { Principal } from '@switchboard/common';
import { CreateInviteDto, ListInvitesQueryDto, ListUsersQueryDto, UpdateUserDto } from './dto/user.dto';
import { InvitesService } from './invites.service';
import {
  AddMembersDto,
  CreateWorkspaceDto,
  ListMembersQueryDto,
  ListWorkspacesQueryDto,
  SecuritySettingsDto,
  UpdateMemberDto,
  UpdateWorkspaceDto,
} from './dto/workspace.dto';
import { MembersService } from './members.service';
import { SecuritySettingsService } from './security-settings.service';
import { UsersService } from './users.service';
import { WorkspacesService } from './workspaces.service';

@ApiTags('Users')
@Controller('admin/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @Authenticated({ permission: 'users.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListUsersQueryDto) {
    return this.users.list(principal, query);
  }

  @Get(':userId')
  @Authenticated({ permission: 'users.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('userId') userId: string) {
    return this.users.get(principal, userId);
  }

  @Put(':userId')
  @Authenticated({ permission: 'users.update', audit: { resource: 'user', idParam: 'userId' } })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('userId') userId: string,
    @Body() dto: UpdateUserDto,
  ) {
    return this.users.update(principal, userId, dto);
  }

  @Delete(':userId')
  @Authenticated({ permission: 'users.delete', audit: { resource: 'user', idParam: 'userId' } })
  remove(@CurrentPrincipal() principal: Principal, @Param('userId') userId: string) {
    return this.users.remove(principal, userId);
  }
}

@ApiTags('Workspaces')
@Controller('admin/workspaces')
export class WorkspacesController {
  constructor(
    private readonly workspaces: WorkspacesService,
    private readonly members: MembersService,
    private readonly securitySettings: SecuritySettingsService,
  ) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'workspaces.create', audit: { resource: 'workspace' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateWorkspaceDto) {
    return this.workspaces.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'workspaces.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListWorkspacesQueryDto) {
    return this.workspaces.list(principal, query);
  }

  @Get(':workspaceId')
  @Authenticated({ permission: 'workspaces.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('workspaceId') workspaceId: string) {
    return this.workspaces.get(principal, workspaceId);
  }

  @Put(':workspaceId')
  @Authenticated({
    permission: 'workspaces.update',
    audit: { resource: 'workspace', idParam: 'workspaceId' },
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: UpdateWorkspaceDto,
  ) {
    return this.workspaces.update(principal, workspaceId, dto);
  }

  @Delete(':workspaceId')
  @Authenticated({
    permission: 'workspaces.delete',
    audit: { resource: 'workspace', idParam: 'workspaceId' },
  })
  archive(@CurrentPrincipal() principal: Principal, @Param('workspaceId') workspaceId: string) {
    return this.workspaces.archive(principal, workspaceId);
  }

  @Post(':workspaceId/users')
  @HttpCode(200)
  @Authenticated({
    permission: 'workspace_members.create',
    audit: { resource: 'workspace_member', idParam: 'workspaceId' },
  })
  addMembers(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: AddMembersDto,
  ) {
    return this.members.add(principal, workspaceId, dto);
  }

  @Get(':workspaceId/users')
  @Authenticated({ permission: 'workspace_members.list' })
  listMembers(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Query() query: ListMembersQueryDto,
  ) {
    return this.members.list(principal, workspaceId, query);
  }

  @Get(':workspaceId/users/:userId')
  @Authenticated({ permission: 'workspace_members.read' })
  getMember(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Param('userId') userId: string,
  ) {
    return this.members.get(principal, workspaceId, userId);
  }

  @Put(':workspaceId/users/:userId')
  @Authenticated({
    permission: 'workspace_members.update',
    audit: { resource: 'workspace_member', idParam: 'userId' },
  })
  updateMember(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Param('userId') userId: string,
    @Body() dto: UpdateMemberDto,
  ) {
    return this.members.update(principal, workspaceId, userId, dto);
  }

  @Delete(':workspaceId/users/:userId')
  @Authenticated({
    permission: 'workspace_members.delete',
    audit: { resource: 'workspace_member', idParam: 'userId' },
  })
  removeMember(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Param('userId') userId: string,
  ) {
    return this.members.remove(principal, workspaceId, userId);
  }

  @Get(':workspaceId/security-settings')
  @Authenticated({ permission: 'security_settings.read' })
  getSecuritySettings(@CurrentPrincipal() principal: Principal, @Param('workspaceId') workspaceId: string) {
    return this.securitySettings.getWorkspace(principal, workspaceId);
  }

  @Put(':workspaceId/security-settings')
  @Authenticated({
    permission: 'security_settings.update',
    audit: { resource: 'security_settings', idParam: 'workspaceId' },
  })
  updateSecuritySettings(
    @CurrentPrincipal() principal: Principal,
    @Param('workspaceId') workspaceId: string,
    @Body() dto: SecuritySettingsDto,
  ) {
    return this.securitySettings.updateWorkspace(principal, workspaceId, dto);
  }
}

@ApiTags('Security settings')
@Controller('admin/security-settings')
export class SecuritySettingsController {
  constructor(private readonly securitySettings: SecuritySettingsService) {}

  @Get()
  @Authenticated({ permission: 'security_settings.read' })
  get(@CurrentPrincipal() principal: Principal) {
    return this.securitySettings.getOrganisation(principal);
  }

  @Put()
  @Authenticated({ permission: 'security_settings.update', audit: { resource: 'security_settings' } })
  update(@CurrentPrincipal() principal: Principal, @Body() dto: SecuritySettingsDto) {
    return this.securitySettings.updateOrganisation(principal, dto);
  }
}

@ApiTags('User invites')
@Controller('admin/users/invites')
export class InvitesController {
  constructor(private readonly invites: InvitesService) {}

  @Post()
  @HttpCode(200)
  @Authenticated({ permission: 'invites.create', audit: { resource: 'invite' } })
  create(@CurrentPrincipal() principal: Principal, @Body() dto: CreateInviteDto) {
    return this.invites.create(principal, dto);
  }

  @Get()
  @Authenticated({ permission: 'invites.list' })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListInvitesQueryDto) {
    return this.invites.list(principal, query);
  }

  @Get(':inviteId')
  @Authenticated({ permission: 'invites.read' })
  get(@CurrentPrincipal() principal: Principal, @Param('inviteId') inviteId: string) {
    return this.invites.get(principal, inviteId);
  }

  @Delete(':inviteId')
  @Authenticated({ permission: 'invites.delete', audit: { resource: 'invite', idParam: 'inviteId' } })
  cancel(@CurrentPrincipal() principal: Principal, @Param('inviteId') inviteId: string) {
    return this.invites.cancel(principal, inviteId);
  }

  @Post(':inviteId/resend')
  @HttpCode(200)
  @Authenticated({ permission: 'invites.resend', audit: { resource: 'invite', idParam: 'inviteId' } })
  resend(@CurrentPrincipal() principal: Principal, @Param('inviteId') inviteId: string) {
    return this.invites.resend(principal, inviteId);
  }
}

import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InviteEntity } from './entities/invite.entity';
import { OrganisationEntity } from './entities/organisation.entity';
import { UserEntity } from './entities/user.entity';
import { WorkspaceMemberEntity } from './entities/workspace-member.entity';
import { WorkspaceEntity } from './entities/workspace.entity';
import {
  InvitesController,
  SecuritySettingsController,
  UsersController,
  WorkspacesController,
} from './identity.controller';
import { IdentityLookupService } from './identity-lookup.service';
import { IdentitySetupService } from './identity-setup.service';
import { InvitesService } from './invites.service';
import { MembersService } from './members.service';
import { SecuritySettingsService } from './security-settings.service';
import { UsersService } from './users.service';
import { WorkspacesService } from './workspaces.service';

@Module({
  imports: [
    TypeOrmModule.forFeature([
      OrganisationEntity,
      UserEntity,
      WorkspaceEntity,
      WorkspaceMemberEntity,
      InviteEntity,
    ]),
  ],
  controllers: [InvitesController, UsersController, WorkspacesController, SecuritySettingsController],
  providers: [
    UsersService,
    WorkspacesService,
    MembersService,
    InvitesService,
    SecuritySettingsService,
    IdentitySetupService,
    IdentityLookupService,
  ],
  exports: [
    UsersService,
    WorkspacesService,
    MembersService,
    InvitesService,
    SecuritySettingsService,
    IdentitySetupService,
    IdentityLookupService,
  ],
})
export class IdentityModule {}

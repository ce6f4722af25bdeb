"""Counters of messages removed by DELETE /sessions/{id}/messages/last.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('removed_count', sa.Integer(), server_default='0', nullable=False)
        )
        batch_op.add_column(
            sa.Column('live_removed', sa.Integer(), server_default='0', nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_column('live_removed')
        batch_op.drop_column('removed_count')

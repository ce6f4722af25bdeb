"""What each fold's model call was billed for: the summary version's `usage`.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 04:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    usage = sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')
    with op.batch_alter_table('summaries', schema=None) as batch_op:
        batch_op.add_column(sa.Column('usage', usage, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('summaries', schema=None) as batch_op:
        batch_op.drop_column('usage')

"""The lazy `sitectl` group: its table (sitectl.cli.COMMANDS) names every command, and
`sitectl --help` lists them as an eager click group of the same commands would."""
import click
import pytest

from sitectl.cli import COMMANDS, main
from tests.conftest import cli


def help_text(group: click.Group, width: int) -> str:
    with click.Context(group, info_name="sitectl", terminal_width=width, max_content_width=width,
                       **group.context_settings) as ctx:
        return group.get_help(ctx)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_entry_is_a_command_with_that_help(name):
    cmd = main.get_command(None, name)
    assert isinstance(cmd, click.Command) and not cmd.hidden and not cmd.short_help
    stand_in = click.Command(name, help=COMMANDS[name][2])
    for limit in range(0, 130):
        assert stand_in.get_short_help_str(limit) == cmd.get_short_help_str(limit), limit


def test_help_lists_what_an_eager_group_would():
    eager = click.Group("sitectl", help=main.help, params=main.params, context_settings=main.context_settings)
    for name in main.list_commands(None):
        eager.add_command(main.get_command(None, name), name)
    for width in (40, 50, 60, 72, 80, 120):
        assert help_text(main, width) == help_text(eager, width), width


def test_unknown_command_suggests_close_names():
    code, out = cli("statu")
    assert code == 2 and "No such command 'statu'. Did you mean 'status'?" in out, out

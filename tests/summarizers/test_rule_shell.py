"""Shell commands read with a lexer: only real redirection targets and file arguments are files."""

from __future__ import annotations

from app.summarizers.rule.shell import shell_files, strip_heredocs, tokens


class TestHeredocs:
    def test_heredoc_body_is_data_not_redirections(self) -> None:
        command = (
            "cat > notes/plan.md <<'EOF'\n"
            "Step 1 > step 2\n"
            "print('x') >> not_a_file.txt\n"
            "EOF\n"
            "wc -l notes/plan.md"
        )
        assert shell_files(command) == (("notes/plan.md", "written"),)

    def test_commit_message_heredoc_in_command_substitution(self) -> None:
        command = "git commit -m \"$(cat <<'EOF'\nLinked > the renderer\n\nconst x = 1;\nEOF\n)\""
        assert shell_files(command) == ()

    def test_dash_heredoc_ends_at_tab_indented_delimiter(self) -> None:
        assert strip_heredocs("python - <<-END\n\tx > y\n\tEND\necho done") == (
            "python - <<-END\necho done"
        )

    def test_two_heredocs_on_one_line(self) -> None:
        stripped = strip_heredocs("paste <<A <<B\n1\nA\n2\nB\necho ok > out.log")
        assert stripped == "paste <<A <<B\necho ok > out.log"


class TestRedirections:
    def test_python_c_program_is_one_word(self) -> None:
        command = "python -c \"open('a.txt', 'w').write('>')\" > result.json"
        assert shell_files(command) == (("result.json", "written"),)

    def test_quoted_greater_than_is_not_a_redirection(self) -> None:
        assert shell_files('echo "a > b" && grep -n ">" src/app.py') == ()

    def test_descriptors_and_dev_null_are_not_files(self) -> None:
        assert shell_files("mix test 2>&1 | tail -5; ls missing 2>/dev/null") == ()

    def test_append_through_tee_and_redirect(self) -> None:
        files = shell_files("make 2>&1 | tee -a build.log && echo done >> build.log")
        assert files == (("build.log", "modified"),)

    def test_pipes_and_and_split_programs(self) -> None:
        files = shell_files("sed -i 's/a/b/' lib/x.ex && cat config/dev.exs | head -3")
        assert files == (("lib/x.ex", "modified"), ("config/dev.exs", "read"))

    def test_input_redirection_is_a_read(self) -> None:
        assert shell_files("psql -f - < db/schema.sql") == (("db/schema.sql", "read"),)

    def test_unbalanced_quotes_give_no_files(self) -> None:
        assert shell_files("echo 'oops > file.txt") == ()


class TestTokens:
    def test_operators_are_their_own_tokens(self) -> None:
        assert tokens("a&&b|c;d") == ["a", "&&", "b", "|", "c", ";", "d"]

    def test_quoted_operators_stay_in_their_words(self) -> None:
        assert tokens("grep -e '>' -e \"a|b\" x") == ["grep", "-e", ">", "-e", "a|b", "x"]

    def test_comments_end_at_the_line_but_hash_inside_a_word_stays(self) -> None:
        assert tokens("echo a#b ${X#p} # note > x\nls") == ["echo", "a#b", "${X#p}", "\n", "ls"]

    def test_newlines_separate_commands(self) -> None:
        assert tokens("cd src\nls") == ["cd", "src", "\n", "ls"]

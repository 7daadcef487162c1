"""Help texts shared by the command line's parsers (main and the attack commands)."""

DELIMITER_HELP = (
    "CSV delimiter: one character, or tab (also \\t), comma, semicolon, pipe or space "
    "(default: sniffed among , ; tab |)"
)


def examples(*commands: str) -> str:
    """A command's help epilog: example command lines, laid out as written.

    Every parser of the command line keeps an epilog's line breaks, so a long
    example may continue on the next line after a ``\\``.

    Example:
        >>> print(examples("kanonym demo"))
        Examples:
          kanonym demo
    """
    return "Examples:\n" + "\n".join(f"  {command}" for command in commands)

"""``table-controller keys generate|token``: CURVE key pairs; supervisor tokens and their salted form."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    keys = subparsers.add_parser("keys", help="CURVE keys for a secured event stream; supervisor tokens")
    sub = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    sub.required = True
    generate = sub.add_parser(
        "generate",
        help="write a key pair: NAME.key (public) and NAME.key_secret (secret)",
        description=(
            "Writes NAME.key (public key: give it to the other side) and NAME.key_secret "
            "(secret key: stays on this machine, mode 600) into --dir. A table's pair goes in "
            "its configuration (server secret); a display's public key goes in the table's "
            "authorised-clients folder."
        ),
    )
    generate.add_argument("--name", required=True, help="key name, e.g. table-T01 or floor-display-3")
    generate.add_argument("--dir", type=Path, default=Path("."), help="folder to write to (default .)")
    generate.add_argument("--json", action="store_true", help="print a JSON object")
    generate.set_defaults(func=run_generate)
    signing = sub.add_parser(
        "signing",
        help="write an Ed25519 key pair for signed journal checkpoints: NAME.signing, NAME.verify",
        description=(
            "NAME.signing (private, mode 600) stays on the table PC and goes in the table's "
            "journal.signing_key; NAME.verify (public) goes to whoever checks the journal "
            "(journal verify --checkpoints FILE --verify-key NAME.verify)."
        ),
    )
    signing.add_argument("--name", required=True, help="key name, e.g. T01")
    signing.add_argument("--dir", type=Path, default=Path("."), help="folder to write to (default .)")
    signing.add_argument("--json", action="store_true", help="print a JSON object")
    signing.set_defaults(func=run_signing)
    token = sub.add_parser(
        "token",
        help="make a supervisor token and its salted form for supervisor.tokens",
        description=(
            "Prints a new random supervisor token (give it to the supervisor, e.g. in a file "
            "for supervise --token-file) and its stored form, scrypt with a random salt, for "
            "the table configuration's supervisor.tokens. With --token-file, the token in "
            "that file is used instead of a new one."
        ),
    )
    token.add_argument("--token-file", type=Path, help="make the stored form of the token in this file")
    token.add_argument("--json", action="store_true", help="print a JSON object")
    token.set_defaults(func=run_token)


def run_signing(args: argparse.Namespace) -> int:
    from table_controller.journal.checkpoints import generate_signing_key

    try:
        private, public = generate_signing_key(args.dir, args.name)
    except FileExistsError as e:
        from table_controller.errors import TableError

        raise TableError(f"{e.filename} exists: a signing key is never overwritten") from e
    if args.json:
        print(json.dumps({"signing_key": str(private), "verify_key": str(public)}))
    else:
        print(f"signing key  {private}  (journal.signing_key; stays on this machine)")
        print(f"verify key   {public}  (for journal verify --verify-key)")
    return 0


def run_token(args: argparse.Namespace) -> int:
    from table_controller.tokens import new_token, stored_form

    secret = args.token_file.read_text().strip() if args.token_file else new_token()
    stored = stored_form(secret)
    if args.json:
        print(json.dumps({"token": None if args.token_file else secret, "stored": stored}))
    else:
        if not args.token_file:
            print(f"token   {secret}   (give it to the supervisor; it is not stored anywhere)")
        print(f'stored  "{stored}"   (supervisor.tokens in the table configuration)')
    return 0


def run_generate(args: argparse.Namespace) -> int:
    import zmq.auth

    from table_controller.publish.security import generate_keys

    public, secret = generate_keys(args.dir, args.name)
    public_key, _ = zmq.auth.load_certificate(public)
    if args.json:
        print(json.dumps({"public_file": str(public), "secret_file": str(secret),
                          "public_key": public_key.decode()}))
    else:
        print(f"public key  {public}  ({public_key.decode()})")
        print(f"secret key  {secret}  (keep it on this machine)")
    return 0

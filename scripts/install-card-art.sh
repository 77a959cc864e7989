#!/bin/sh
# Install the real card artwork the camera tests, the simulated camera and the
# recognition benchmark render their scenes from. Idempotent; run as root on Debian.
#   - Debian kdegames-card-data-kf5: KDE SVG decks under /usr/share/carddecks/
#   - Debian librsvg2-bin: rsvg-convert, which renders one card element of a KDE deck
#   - npm svg-cards: PNG faces, installed under ${TABLE_CONTROLLER_CARD_ART:-/opt/card-art}
# CARD_ART_RETRY_WAIT_S: the wait (s) before npm's second try, doubled before each later one (5).
set -eu
ART_ROOT="${TABLE_CONTROLLER_CARD_ART:-/opt/card-art}"

need_apt=""
[ -f /usr/share/carddecks/svg-standard/standard.svgz ] || need_apt="$need_apt kdegames-card-data-kf5"
command -v rsvg-convert >/dev/null 2>&1 || need_apt="$need_apt librsvg2-bin"
command -v npm >/dev/null 2>&1 || need_apt="$need_apt npm"
if [ -n "$need_apt" ]; then
    echo "install-card-art: apt-get install$need_apt"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need_apt >/dev/null
fi

FACE="$ART_ROOT/node_modules/svg-cards/png/2x/heart_queen.png"
if [ ! -f "$FACE" ]; then
    echo "install-card-art: npm install svg-cards into $ART_ROOT"
    mkdir -p "$ART_ROOT"
    wait_s="${CARD_ART_RETRY_WAIT_S:-5}"
    case "$wait_s" in
        ''|*[!0-9]*) echo "install-card-art: CARD_ART_RETRY_WAIT_S must be whole seconds, not '$wait_s'" >&2; exit 1 ;;
    esac
    # The registry can fail or stall on a fresh machine (seen: an npm exit with no message, and
    # one install that took a minute): try 5 times, waiting longer each time, and show npm's
    # own words when a try fails.
    log="$(mktemp)"
    trap 'rm -f "$log"' EXIT
    for attempt in 1 2 3 4 5; do
        npm install --prefix "$ART_ROOT" --no-audit --no-fund --loglevel=error svg-cards@4 >"$log" 2>&1 && break
        cat "$log" >&2
        [ "$attempt" = 5 ] && { echo "install-card-art: npm install svg-cards failed 5 times" >&2; exit 1; }
        echo "install-card-art: npm install failed (try $attempt of 5); again in $wait_s s" >&2
        sleep "$wait_s"
        wait_s=$((wait_s * 2))
    done
    [ -f "$FACE" ] || { echo "install-card-art: npm installed svg-cards but $FACE is missing" >&2; exit 1; }
fi
echo "install-card-art: ok (KDE decks in /usr/share/carddecks, svg-cards in $ART_ROOT)"

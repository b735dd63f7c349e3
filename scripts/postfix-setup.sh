#!/usr/bin/env bash
# Installs Debian's postfix as a local-only mail server for Berth's mail tests, and
# starts it without systemd. Idempotent: run it again and it only starts it if it is
# not running.
#
# What it sets up:
#   - postfix listening on 127.0.0.1:25 only (inet_interfaces = loopback-only)
#   - the test domains (berth.test, support.berth.test) delivered locally: every
#     address in them, known user or not, lands in the Maildir of the user
#     BERTH_MAIL_USER (default berthmail), /var/lib/berthmail/Maildir/new, one file a
#     mail with its X-Original-To
#   - no STARTTLS (Debian's snakeoil certificate is trusted by nobody; Berth's
#     STARTTLS is tested against an in-process server with a certificate of its own)
#   - nothing ever relayed: any other domain is refused by the error transport
#     (default_transport = error, relay_transport = error), so no test mail can
#     leave the machine
# The mail tests read the Maildir back (BERTH_POSTFIX_MAILDIR, printed on the last
# line as an export).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "postfix-setup: run as root" >&2; exit 1; }

USER_=${BERTH_MAIL_USER:-berthmail}
HOME_=/var/lib/$USER_
DOMAINS="berth.test, support.berth.test"

if ! dpkg -s postfix >/dev/null 2>&1; then
	[ -n "${BERTH_SKIP_APT_UPDATE:-}" ] || apt-get update
	# No question at install time: a local-only server named berth.test. The package's
	# scripts must not start the service (no systemd here): a policy-rc.d that refuses
	# every start, for the install only, unless the machine has one of its own.
	printf '%s\n' "postfix postfix/main_mailer_type select Local only" "postfix postfix/mailname string berth.test" |
		debconf-set-selections
	policy_rc=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy_rc=/usr/sbin/policy-rc.d
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postfix
	if [ -n "$policy_rc" ]; then rm -f "$policy_rc"; fi
fi

id "$USER_" >/dev/null 2>&1 || useradd -r -m -d "$HOME_" -s /usr/sbin/nologin "$USER_"
mkdir -p "$HOME_/Maildir/new" "$HOME_/Maildir/cur" "$HOME_/Maildir/tmp"
chown -R "$USER_:$USER_" "$HOME_"
chmod 755 "$HOME_" "$HOME_/Maildir" "$HOME_/Maildir/new"

postconf -e \
	"inet_interfaces = loopback-only" \
	"inet_protocols = ipv4" \
	"myhostname = mail.berth.test" \
	"mydestination = $DOMAINS, localhost" \
	"mynetworks = 127.0.0.0/8" \
	"relayhost =" \
	"default_transport = error:berth test postfix delivers locally only" \
	"relay_transport = error:berth test postfix delivers locally only" \
	"local_recipient_maps =" \
	"luser_relay = $USER_" \
	"home_mailbox = Maildir/" \
	"mailbox_command =" \
	"smtputf8_enable = yes" \
	"smtpd_tls_security_level = none" \
	"message_size_limit = 20480000"
newaliases

if postfix status >/dev/null 2>&1; then
	postfix reload >/dev/null 2>&1 || true
else
	postfix start
fi
# Wait for the SMTP port.
for _ in $(seq 1 50); do
	if (exec 3<>/dev/tcp/127.0.0.1/25) 2>/dev/null; then
		echo "export BERTH_POSTFIX_MAILDIR=$HOME_/Maildir"
		exit 0
	fi
	sleep 0.2
done
echo "postfix-setup: nothing listens on 127.0.0.1:25" >&2
exit 1

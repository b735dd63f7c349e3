package ops

import (
	"github.com/GehirnInc/crypt/common"
	"github.com/GehirnInc/crypt/sha512_crypt"
)

// RootPassRounds is the SHA-512-crypt cost of a root password's hash: about 40 ms
// here, the time a guest's crypt(3) takes to check it too.
const RootPassRounds = 100_000

// hashRootPassword hashes an order's root password for the guest: cloud-init writes
// the hash to /etc/shadow, and the guest's crypt(3) checks it when root signs in.
// SHA-512-crypt ($6$) is what every guest's libc or libxcrypt verifies and takes a
// password of any length; bcrypt stops at 72 bytes (the 72-character rule would
// have to be 18 characters of a 4-byte script), and argon2id, which the API's own
// secrets could use, no guest's crypt(3) can check.
func hashRootPassword(pw string) (string, error) {
	salt := common.Salt{MagicPrefix: []byte(sha512_crypt.MagicPrefix), SaltLenMin: sha512_crypt.SaltLenMin,
		SaltLenMax: sha512_crypt.SaltLenMax, RoundsMin: sha512_crypt.RoundsMin, RoundsMax: sha512_crypt.RoundsMax,
		RoundsDefault: sha512_crypt.RoundsDefault}
	return sha512_crypt.New().Generate([]byte(pw), salt.GenerateWRounds(sha512_crypt.SaltLenMax, RootPassRounds))
}

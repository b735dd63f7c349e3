package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/berthhq/berth/internal/ops"
)

// LicenseKeyFile is the data dir's key that seals the license key pools' activation
// keys at rest when --license-key-file names none (docs/SECURITY.md, Licenses).
const LicenseKeyFile = "license-key"

// licenseKey reads the operator's license key: from file when given, else from the
// data dir's LicenseKeyFile, made (0600, random) when absent. Without either (a
// PostgreSQL Berth without --license-key-file) there is none: key pools are out of
// stock. The file holds the key's 64 hex digits (`openssl rand -hex 32`).
func licenseKey(file, dataDir string) ([]byte, error) {
	if file == "" {
		if dataDir == "" {
			return nil, nil
		}
		file = filepath.Join(dataDir, LicenseKeyFile)
		if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			if err := makeLicenseKey(file); err != nil {
				return nil, err
			}
		}
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("license key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) != ops.LicenseKeySize {
		return nil, fmt.Errorf("license key %s: want %d hex digits (openssl rand -hex %d)", file, 2*ops.LicenseKeySize, ops.LicenseKeySize)
	}
	return key, nil
}

// makeLicenseKey writes a new random key to file, readable by its owner only; a file
// made meanwhile by another process is kept.
func makeLicenseKey(file string) error {
	key := make([]byte, ops.LicenseKeySize)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("license key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("license key: %w", err)
	}
	return f.Close()
}

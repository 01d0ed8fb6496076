package engine

import (
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
)

// AppendVault is config.AppendVault into a home engram may write: one
// that holds another program's files is refused (homedir.Check), untouched.
func AppendVault(home string, v config.VaultConfig, getenv func(string) string) (string, error) {
	if err := homedir.Check(home); err != nil {
		return "", err
	}
	return config.AppendVault(home, v, getenv)
}

// AddVault records the folder dir as a vault of cfg's home, its documents
// in namespace: made absolute (config.VaultDir), refused when it is, holds or lies
// in a vault already (CheckNewVault), then appended to config.toml
// (AppendVault; getenv as LoadConfig's). It returns the vault's root and
// config.toml's path.
func AddVault(cfg config.Config, dir, namespace string, getenv func(string) string) (root, path string, err error) {
	if root, err = config.VaultDir(dir); err != nil {
		return "", "", err
	}
	if err = cfg.CheckNewVault(root); err != nil {
		return root, "", err
	}
	path, err = AppendVault(cfg.Home, config.VaultConfig{Path: root, Namespace: namespace}, getenv)
	return root, path, err
}

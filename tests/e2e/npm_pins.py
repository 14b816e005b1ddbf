"""The npm packages an offline schema check runs on (tests/dashboards, tests/kubernetes): the
versions package.json pins, installed with `npm ci` from the lockfile when one is missing or
another version."""

import json
import os
import shutil
import subprocess

NPM_TIMEOUT = 600.0  # seconds for `npm ci` (tens of MB)


def installed_version(package_dir, package):
    """The version of `package` under package_dir/node_modules, or None."""
    try:
        with open(os.path.join(package_dir, "node_modules", package, "package.json"),
                  encoding="utf-8") as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


def pinned_versions(package_dir):
    with open(os.path.join(package_dir, "package.json"), encoding="utf-8") as f:
        return json.load(f)["devDependencies"]


def ensure_packages(package_dir):
    """npm ci when a pinned package is missing or at another version; returns an error or None."""
    pins = pinned_versions(package_dir)
    if all(installed_version(package_dir, name) == version for name, version in pins.items()):
        return None
    result = subprocess.run([shutil.which("npm") or "npm", "ci", "--no-audit", "--no-fund"],
                            cwd=package_dir, capture_output=True, text=True,
                            timeout=NPM_TIMEOUT, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        return "npm ci in %s failed (rc=%d):\n%s%s" % (package_dir, result.returncode,
                                                       result.stdout, result.stderr)
    wrong = {name: installed_version(package_dir, name) for name, version in pins.items()
             if installed_version(package_dir, name) != version}
    return "after npm ci, versions differ from package.json: %s" % wrong if wrong else None

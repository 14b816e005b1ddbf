// Validates Kubernetes manifests against the published schemas: each document of each file
// (multi-document YAML, read as YAML 1.1 as kubectl reads it, so 0440 is octal) is given to the
// model class of its apiVersion and kind from npm kubernetes-models (the Kubernetes OpenAPI
// schemas) or @kubernetes-models/prometheus-operator (the operator's CRDs), whose validate()
// checks types, required fields, enums and patterns. A document of an apiVersion/kind neither
// package knows is an error: nothing passes unchecked.
//
//   node validate_manifests.js FILE...
//
// Prints one JSON object: {"documents": [{file, index, apiVersion, kind, name, errors: [...]}]}
// and exits 0 when no document has an error, 1 otherwise (2: bad usage). Run by
// tests/e2e/kubernetes_manifests_test.py after `npm ci` here.
"use strict";

const fs = require("fs");
const YAML = require("yaml");

// apiVersion -> the module whose exports are that version's model classes, by kind.
function candidateModules(apiVersion) {
  if (typeof apiVersion !== "string" || apiVersion === "") return [];
  if (apiVersion === "v1") return ["kubernetes-models/v1"];
  return [
    "kubernetes-models/" + apiVersion,
    "@kubernetes-models/prometheus-operator/" + apiVersion,
  ];
}

function modelClass(apiVersion, kind) {
  for (const name of candidateModules(apiVersion)) {
    let exported;
    try {
      exported = require(name);
    } catch (error) {
      if (error.code === "MODULE_NOT_FOUND" || error.code === "ERR_PACKAGE_PATH_NOT_EXPORTED") {
        continue;
      }
      throw error;
    }
    const model = exported[kind];
    if (typeof model === "function" && model.apiVersion === apiVersion && model.kind === kind) {
      return model;
    }
  }
  return null;
}

function validationErrors(object) {
  if (object === null || typeof object !== "object" || Array.isArray(object)) {
    return ["the document is not a mapping"];
  }
  const model = modelClass(object.apiVersion, object.kind);
  if (model === null) {
    return ["no schema for apiVersion " + JSON.stringify(object.apiVersion) + " kind " +
            JSON.stringify(object.kind) + " in kubernetes-models or prometheus-operator"];
  }
  try {
    new model(object).validate();
    return [];
  } catch (error) {
    if (Array.isArray(error.errors) && error.errors.length > 0) {
      return error.errors.map((e) => (e.instancePath || "/") + " " + e.message);
    }
    return [String(error.message || error)];
  }
}

function checkFile(file) {
  const results = [];
  const documents = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"), {version: "1.1"});
  documents.forEach((document, index) => {
    const entry = {file, index, apiVersion: null, kind: null, name: null, errors: []};
    if (document.errors.length > 0) {
      entry.errors = document.errors.map((e) => "YAML: " + e.message);
      results.push(entry);
      return;
    }
    const object = document.toJS();
    if (object === null || object === undefined) return;  // comments only
    if (typeof object === "object" && !Array.isArray(object)) {
      entry.apiVersion = object.apiVersion === undefined ? null : object.apiVersion;
      entry.kind = object.kind === undefined ? null : object.kind;
      entry.name = object.metadata && object.metadata.name ? object.metadata.name : null;
    }
    entry.errors = validationErrors(object);
    results.push(entry);
  });
  if (results.length === 0) {
    results.push({file, index: 0, apiVersion: null, kind: null, name: null,
                  errors: ["no document in the file"]});
  }
  return results;
}

function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: node validate_manifests.js FILE...\n");
    return 2;
  }
  const documents = files.flatMap(checkFile);
  process.stdout.write(JSON.stringify({documents}, null, 1) + "\n");
  return documents.some((d) => d.errors.length > 0) ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));

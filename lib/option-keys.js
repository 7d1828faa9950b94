// Unknown keys in an options object refused, not ignored: every constructor, method and
// function of the binding whose parameter is one of its object types (index.d.ts, which
// napi writes from the Rust types, read once at load) checks the object it is given, and
// the objects nested in it that are object types too (`engine`, `resources`, `egress`, the
// items of `mounts`…), before the native code sees them. An unknown key is
// `INVALID_ARGUMENT` naming it, where it is, and the nearest known key: thrown by a
// constructor or a synchronous method, a rejection of a method that returns a promise.
'use strict'

const { readFileSync } = require('node:fs')
const { join } = require('node:path')

/** Object types (interface name → field name → type text) and callables of index.d.ts. */
function readTypes(text) {
  const interfaces = new Map()
  for (const [, name, body] of text.matchAll(/^export interface (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const fields = new Map()
    for (const [, field, type] of body.matchAll(/^ {2}(\w+)\??: (.+)$/gm)) fields.set(field, type)
    interfaces.set(name, fields)
  }
  const classes = new Map()
  for (const [, name, body] of text.matchAll(/^export declare class (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const methods = []
    for (const [, isStatic, method, params, returns] of body.matchAll(/^ {2}(static )?(\w+)\((.*)\)(?:: (.+))?$/gm)) {
      methods.push({ isStatic: Boolean(isStatic), name: method, params: splitParams(params), async: /^Promise</.test(returns ?? '') })
    }
    classes.set(name, methods)
  }
  const functions = []
  for (const [, name, params, returns] of text.matchAll(/^export declare function (\w+)\((.*)\): (.+)$/gm)) {
    functions.push({ name, params: splitParams(params), async: /^Promise</.test(returns) })
  }
  return { interfaces, classes, functions }
}

/** `a: string, opts?: X | null` → [{ name: 'a', type: 'string' }, { name: 'opts', type: 'X | null' }]. */
function splitParams(text) {
  const parts = []
  let depth = 0
  let start = 0
  for (let i = 0; i <= text.length; i++) {
    const c = text[i]
    if (c === '<' || c === '(' || c === '{' || c === '[') depth++
    else if (c === '>' || c === ')' || c === '}' || c === ']') depth--
    else if ((c === ',' && depth === 0) || i === text.length) {
      const part = text.slice(start, i).trim()
      const colon = part.indexOf(':')
      if (colon > 0) parts.push({ name: part.slice(0, colon).replace('?', '').trim(), type: part.slice(colon + 1).trim() })
      start = i + 1
    }
  }
  return parts
}

function distance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1))
    }
    row = next
  }
  return row[b.length]
}

function nearest(key, known) {
  let best
  for (const k of known) if (best === undefined || distance(key, k) < distance(key, best)) best = k
  return best
}

function isPlainObject(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function invalid(message) {
  const err = new Error(message)
  err.code = 'INVALID_ARGUMENT'
  return err
}

class OptionKeys {
  constructor(interfaces) {
    this.interfaces = interfaces
  }

  /** The object types a type text names (`X | undefined | null`, `Array<X>`, `Record<string, X>`). */
  named(type) {
    return [...new Set(type.match(/\b[A-Z]\w*\b/g) ?? [])].filter((t) => this.interfaces.has(t))
  }

  /** The first unknown key of `value` (a value of `type`) and its nested objects, as an error. */
  check(value, type, path) {
    const names = this.named(type)
    if (names.length === 0) return undefined
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const err = this.check(value[i], type, `${path}[${i}]`)
        if (err) return err
      }
      return undefined
    }
    if (!isPlainObject(value)) return undefined
    if (/^Record</.test(type)) {
      for (const [key, item] of Object.entries(value)) {
        const err = this.check(item, type.replace(/^Record<\s*string\s*,/, ''), `${path}.${key}`)
        if (err) return err
      }
      return undefined
    }
    // A union of object types: the one that knows every key (else the first's complaint).
    let first
    for (const name of names) {
      const err = this.checkObject(value, this.interfaces.get(name), path)
      if (!err) return undefined
      first ??= err
    }
    return first
  }

  checkObject(value, fields, path) {
    for (const key of Object.keys(value)) {
      const type = fields.get(key)
      if (type === undefined) {
        const near = nearest(key, fields.keys())
        return invalid(`${path}: unknown option '${key}'${near === undefined ? '' : ` (did you mean '${near}'?)`}`)
      }
      const err = this.check(value[key], type, `${path}.${key}`)
      if (err) return err
    }
    return undefined
  }

  checkArgs(where, params, args) {
    for (let i = 0; i < params.length && i < args.length; i++) {
      const err = this.check(args[i], params[i].type, `${where}: ${params[i].name}`)
      if (err) return err
    }
    return undefined
  }
}

/** Wraps `fn` so that its options are checked first. */
function guarded(keys, where, spec, fn) {
  return function (...args) {
    const err = keys.checkArgs(where, spec.params, args)
    if (err) {
      if (spec.async) return Promise.reject(err)
      throw err
    }
    return fn.apply(this, args)
  }
}

/**
 * `Class` with its constructor's and static methods' options checked: a function sharing
 * its prototype (so that `instanceof` holds for instances the native side makes), its
 * statics inherited but for the checked ones (napi makes statics read-only in place).
 */
function guardedClass(keys, name, Class, methods) {
  const ctor = methods.find((m) => m.name === 'constructor')
  const statics = methods.filter((m) => m.isStatic)
  if (!ctor && statics.length === 0) return Class
  const Guarded = function (...args) {
    const err = ctor && keys.checkArgs(`new ${name}`, ctor.params, args)
    if (err) throw err
    return Reflect.construct(Class, args, new.target === Guarded ? Class : new.target)
  }
  Object.defineProperty(Guarded, 'name', { value: name })
  Guarded.prototype = Class.prototype
  Object.setPrototypeOf(Guarded, Class)
  for (const spec of statics) {
    Object.defineProperty(Guarded, spec.name, { value: guarded(keys, `${name}.${spec.name}`, spec, Class[spec.name]), writable: true, configurable: true })
  }
  return Guarded
}

module.exports = function installOptionKeys(native, declarations = join(__dirname, '..', 'index.d.ts')) {
  const { interfaces, classes, functions } = readTypes(readFileSync(declarations, 'utf8'))
  const keys = new OptionKeys(interfaces)
  const takesOptions = (spec) => spec.params.some((p) => keys.named(p.type).length > 0)
  for (const [name, all] of classes) {
    const Class = native[name]
    if (typeof Class !== 'function') continue
    const methods = all.filter(takesOptions)
    for (const spec of methods.filter((m) => !m.isStatic && m.name !== 'constructor')) {
      const fn = Class.prototype[spec.name]
      if (typeof fn === 'function') Class.prototype[spec.name] = guarded(keys, `${name}.${spec.name}`, spec, fn)
    }
    native[name] = guardedClass(keys, name, Class, methods)
  }
  for (const spec of functions.filter(takesOptions)) {
    if (typeof native[spec.name] === 'function') native[spec.name] = guarded(keys, spec.name, spec, native[spec.name])
  }
}

module.exports.readTypes = readTypes

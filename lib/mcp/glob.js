// Glob patterns as find_files and search_text take them, compiled to a RegExp over a
// path relative to the folder searched: `*` and `?` within one path segment, `**` across
// segments, `[abc]`/`[!abc]` classes, `{a,b}` alternatives. A pattern without `/` matches
// a file name at any depth (`*.ts`), as .gitignore reads it.
'use strict'

const { invalid } = require('./results.js')

const SPECIAL = /[.+^$()|\\]/

/**
 * @param {string} pattern
 * @returns {RegExp}
 */
function globToRegExp(pattern) {
  if (pattern.length > 1000) throw invalid('a glob pattern is at most 1000 characters')
  const glob = pattern.replace(/^\.\//, '')
  let out = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const atStart = i === 0 || glob[i - 1] === '/'
        const slashAfter = glob[i + 2] === '/'
        i++
        if (atStart && slashAfter) {
          out += '(?:.*/)?'
          i++
        } else out += '.*'
      } else out += '[^/]*'
    } else if (c === '?') out += '[^/]'
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2)
      if (close === -1) out += '\\['
      else {
        let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\')
        if (body.startsWith('!')) body = `^${body.slice(1)}`
        out += `[${body}]`
        i = close
      }
    } else if (c === '{') {
      braces++
      out += '(?:'
    } else if (c === '}' && braces > 0) {
      braces--
      out += ')'
    } else if (c === ',' && braces > 0) out += '|'
    else if (SPECIAL.test(c) || c === '{' || c === '}' || c === ']') out += `\\${c}`
    else out += c
  }
  if (braces > 0) throw invalid(`glob '${pattern}' has an unclosed {`)
  const anyDepth = !glob.includes('/')
  try {
    return new RegExp(`${anyDepth ? '(?:^|/)' : '^'}${out}$`)
  } catch (err) {
    throw invalid(`glob '${pattern}' is malformed: ${err.message}`)
  }
}

module.exports = { globToRegExp }

#!/usr/bin/env node
// Fails when an export of the generated `index.d.ts` (or of `lib/index.d.ts`), or a member
// of an exported class or interface, has no `/** … */` doc comment right above it: the
// comment an editor shows on hover. Lists every one missing; prints the count documented.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join, relative, resolve } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const files = process.argv.slice(2).length ? process.argv.slice(2) : ['index.d.ts', 'lib/index.d.ts']

/** Declarations in `text` that need a doc comment, each with whether it has one. */
function declarations(text) {
  const found = []
  let inComment = false
  let commentEndedAt = -1
  let depth = 0
  let container = null
  const lines = text.split('\n')
  lines.forEach((raw, index) => {
    const line = raw.trim()
    if (inComment) {
      if (line.includes('*/')) {
        inComment = false
        commentEndedAt = index
      }
      return
    }
    if (line.startsWith('/**')) {
      if (line.includes('*/')) commentEndedAt = index
      else inComment = true
      return
    }
    if (line === '' || line.startsWith('//')) return
    const documented = commentEndedAt === index - 1
    if (depth === 0 && /^export\s/.test(line) && !/^export\s*\*/.test(line)) {
      const name = line.match(/^export\s+(?:declare\s+)?(?:const|function|class|interface|type|enum)\s+(\w+)/)?.[1]
      found.push({ line: index + 1, name: name ?? line, documented })
      container = name ?? null
    } else if (depth === 1 && container) {
      const member = line.match(/^(?:readonly\s+)?(\w+|'[^']*')\??\s*[(:<]/)?.[1]
      if (member && !line.startsWith('}')) {
        found.push({ line: index + 1, name: `${container}.${member}`, documented })
      }
    }
    depth += (line.match(/{/g) ?? []).length - (line.match(/}/g) ?? []).length
    if (depth === 0) container = null
  })
  return found
}

let missing = 0
let documented = 0
for (const file of files) {
  const path = resolve(root, file)
  for (const decl of declarations(readFileSync(path, 'utf8'))) {
    if (decl.documented) {
      documented++
    } else {
      missing++
      console.error(`${relative(root, path)}:${decl.line}: ${decl.name} has no doc comment`)
    }
  }
}
if (missing) {
  console.error(`[doc-comments] ${missing} declaration(s) without a doc comment (${documented} documented)`)
  process.exit(1)
}
console.log(`[doc-comments] ${documented} exports and members documented in ${files.join(', ')}`)
